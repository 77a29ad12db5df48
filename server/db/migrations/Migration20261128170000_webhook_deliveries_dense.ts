import { Migration } from '@mikro-orm/migrations';

export class Migration20261128170000_webhook_deliveries_dense extends Migration {

  override name = 'Migration20261128170000_webhook_deliveries_dense';

  override up(): void | Promise<void> {
    // Half of each page was kept free for a claim that updated a delivery on its page. A
    // delivery is now written once in the state its first attempt left it, and a retry's
    // claim is a row lock, not an update: pages written from now on are full, and the
    // delivery history takes the bytes of its rows.
    this.addSql(`alter table "webhook_deliveries" reset (fillfactor);`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "webhook_deliveries" set (fillfactor = 50);`);
  }

}
