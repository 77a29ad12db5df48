import { Migration } from '@mikro-orm/migrations';

export class Migration20261127020000_messages_account_key extends Migration {

  override name = 'Migration20261127020000_messages_account_key';

  override up(): void | Promise<void> {
    // A message's account is already held by its contact key (contact_id, account_id) ->
    // contacts, whose account key cascades from accounts: the message's own key to accounts
    // checked the same account again for every message written (a key-share lock on the
    // account row, shared by every concurrent writer of that account), and deleting an account
    // still removes its messages through its contacts.
    this.addSql(`alter table "messages" drop constraint "messages_account_id_foreign";`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "messages" add constraint "messages_account_id_foreign" foreign key ("account_id") references "accounts" ("id") on delete cascade;`);
  }

}
