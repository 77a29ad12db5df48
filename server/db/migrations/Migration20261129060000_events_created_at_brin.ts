import { Migration } from '@mikro-orm/migrations';

export class Migration20261129060000_events_created_at_brin extends Migration {

  override name = 'Migration20261129060000_events_created_at_brin';

  override up(): void | Promise<void> {
    // The hourly sweep of the webhook history reads events by time across accounts. Events are
    // appended in time order, so a block-range index finds the old ones, and a new event in a
    // range not yet summarised costs it nothing (a B-tree would take an entry per event written).
    this.addSql(`create index "events_created_at_index" on "events" using brin ("created_at") with (pages_per_range = 32);`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop index "events_created_at_index";`);
  }

}
