import { Migration } from '@mikro-orm/migrations';

export class Migration20261125140000_messages_external_id_index extends Migration {

  override name = 'Migration20261125140000_messages_external_id_index';

  override up(): void | Promise<void> {
    // A contact's message by its external id: a widget's retry finds its first message, a bot turn its reply.
    this.addSql(`create index "messages_contact_id_external_id_index" on "messages" ("contact_id", "external_id") where external_id is not null;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop index if exists "messages_contact_id_external_id_index";`);
  }

}
