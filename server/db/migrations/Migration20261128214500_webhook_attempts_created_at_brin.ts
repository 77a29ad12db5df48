import { Migration } from '@mikro-orm/migrations';

export class Migration20261128214500_webhook_attempts_created_at_brin extends Migration {

  override name = 'Migration20261128214500_webhook_attempts_created_at_brin';

  override up(): void | Promise<void> {
    // Only the metrics scrape reads attempts by time (the last minutes'), and attempts are
    // appended in time order: a block-range index serves that read, and a new row in a range
    // not yet summarised costs it nothing, where the B-tree took an entry (and a WAL record)
    // for every attempt written. Ranges of 16 pages: the window reads a few pages past its rows.
    this.addSql(`drop index "webhook_attempts_created_at_index";`);
    this.addSql(`create index "webhook_attempts_created_at_index" on "webhook_attempts" using brin ("created_at") with (pages_per_range = 16);`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop index "webhook_attempts_created_at_index";`);
    this.addSql(`create index "webhook_attempts_created_at_index" on "webhook_attempts" ("created_at");`);
  }

}
