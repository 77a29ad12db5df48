import { Migration } from '@mikro-orm/migrations';

export class Migration20261128120000_team_conversations extends Migration {

  override name = 'Migration20261128120000_team_conversations';

  override up(): void | Promise<void> {
    // GET /chat-sessions/recent lists sessions by their newest activity: the time of their
    // last message (their start before any), kept by the one writer of messages.
    this.addSql(`alter table "chat_sessions" add "last_activity_at" timestamptz null;`);
    this.addSql(`update "chat_sessions" s set "last_activity_at" = greatest(s."started_at", (select max(m."created_at") from "messages" m where m."session_id" = s."id"));`);
    this.addSql(`alter table "chat_sessions" alter column "last_activity_at" set not null, alter column "last_activity_at" set default now();`);
    this.addSql(`create index "chat_sessions_account_id_last_activity_at_id_index" on "chat_sessions" ("account_id", "last_activity_at", "id");`);
    // Paged by id only until now; the activity index replaces it.
    this.addSql(`drop index "chat_sessions_account_id_id_index";`);

    // The business's read mark: the time of the newest message it has read (POST /contacts/{id}/read).
    this.addSql(`alter table "contacts" add "business_read_at" timestamptz null;`);

    // The name a reply shows the visitor (`sender_name`), beside `sender`, the credential that wrote it.
    this.addSql(`alter table "messages" add "sender_name" text null;`);

    // What a chat-widget visitor's page reported, first and last seen: the contact's `widget` block.
    this.addSql(`create table "contact_widget_details" ("contact_id" text not null, "account_id" text not null, "page_url" text null, "referrer" text null, "language" text null, "user_agent" text null, "first_seen_at" timestamptz not null, "last_seen_at" timestamptz not null, primary key ("contact_id", "account_id"));`);
    this.addSql(`alter table "contact_widget_details" add constraint "contact_widget_details_contact_id_foreign" foreign key ("contact_id", "account_id") references "contacts" ("id", "account_id") on delete cascade;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "contact_widget_details" cascade;`);
    this.addSql(`alter table "messages" drop column "sender_name";`);
    this.addSql(`alter table "contacts" drop column "business_read_at";`);
    this.addSql(`create index "chat_sessions_account_id_id_index" on "chat_sessions" ("account_id", "id");`);
    this.addSql(`drop index "chat_sessions_account_id_last_activity_at_id_index";`);
    this.addSql(`alter table "chat_sessions" drop column "last_activity_at";`);
  }

}
