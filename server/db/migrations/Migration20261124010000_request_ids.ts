import { Migration } from '@mikro-orm/migrations';

export class Migration20261124010000_request_ids extends Migration {

  override name = 'Migration20261124010000_request_ids';

  override up(): void | Promise<void> {
    // The request that caused an event, sent as X-Request-Id on its webhook deliveries.
    this.addSql(`alter table "events" add "request_id" text null;`);
    // Metrics count the recent attempts at scrape time; without this they would scan the whole log.
    this.addSql(`create index "webhook_attempts_created_at_index" on "webhook_attempts" ("created_at");`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop index if exists "webhook_attempts_created_at_index";`);
    this.addSql(`alter table "events" drop column "request_id";`);
  }

}
