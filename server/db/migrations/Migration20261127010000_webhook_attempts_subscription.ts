import { Migration } from '@mikro-orm/migrations';

export class Migration20261127010000_webhook_attempts_subscription extends Migration {

  override name = 'Migration20261127010000_webhook_attempts_subscription';

  override up(): void | Promise<void> {
    // The delivery log of one subscription, newest first, read along an index led by the
    // subscription: before, a page walked every subscription's attempts by time and kept the
    // ones whose delivery belonged to it, so a quiet subscription's page read the whole table
    // when others were busy. The attempt keeps its delivery's subscription for that.
    this.addSql(`alter table "webhook_attempts" add "subscription_id" text null;`);
    this.addSql(`update "webhook_attempts" a set "subscription_id" = d."subscription_id" from "webhook_deliveries" d where d."id" = a."delivery_id";`);
    this.addSql(`alter table "webhook_attempts" alter column "subscription_id" set not null;`);
    this.addSql(`create index "webhook_attempts_subscription_id_created_at_id_index" on "webhook_attempts" ("subscription_id", "created_at", "id");`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop index "webhook_attempts_subscription_id_created_at_id_index";`);
    this.addSql(`alter table "webhook_attempts" drop column "subscription_id";`);
  }

}
