import { Migration } from '@mikro-orm/migrations';

export class Migration20261126191000_webhook_deliveries_account_key extends Migration {

  override name = 'Migration20261126191000_webhook_deliveries_account_key';

  override up(): void | Promise<void> {
    // A delivery's account is already held by its event key (event_id, account_id) -> events,
    // whose account key cascades from accounts: the delivery's own key to accounts checked the
    // same account again for every delivery queued, and an account's deletion still removes
    // its deliveries through its events.
    this.addSql(`alter table "webhook_deliveries" drop constraint "webhook_deliveries_account_id_foreign";`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "webhook_deliveries" add constraint "webhook_deliveries_account_id_foreign" foreign key ("account_id") references "accounts" ("id") on delete cascade;`);
  }

}
