import { Migration } from '@mikro-orm/migrations';

export class Migration20261121201500_conversations extends Migration {

  override name = 'Migration20261121201500_conversations';

  override up(): void | Promise<void> {
    this.addSql(`create index "chat_sessions_account_id_id_index" on "chat_sessions" ("account_id", "id");`);
    this.addSql(`create unique index "chat_sessions_one_open_per_contact" on "chat_sessions" ("contact_id") where status = 'ChatSessionOpened';`);
    this.addSql(`create index "messages_account_id_created_at_index" on "messages" ("account_id", "created_at");`);
    this.addSql(`alter table "summaries" add column "day" date null;`);
    this.addSql(`alter table "summaries" add constraint "summaries_account_id_day_unique" unique ("account_id", "day");`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "summaries" drop constraint "summaries_account_id_day_unique";`);
    this.addSql(`alter table "summaries" drop column "day";`);
    this.addSql(`drop index "messages_account_id_created_at_index";`);
    this.addSql(`drop index "chat_sessions_one_open_per_contact";`);
    this.addSql(`drop index "chat_sessions_account_id_id_index";`);
  }

}
