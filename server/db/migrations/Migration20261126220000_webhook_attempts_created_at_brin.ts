import { Migration } from '@mikro-orm/migrations';

export class Migration20261126220000_webhook_attempts_created_at_brin extends Migration {

  override name = 'Migration20261126220000_webhook_attempts_created_at_brin';

  override up(): void | Promise<void> {
    // Only the metrics read attempts by time (the last minutes' attempts, at scrape time).
    // Attempts are appended in time order and never updated, so a block-range index finds the
    // recent ones as well as a b-tree, and an attempt written to the unsummarized tail of
    // the table costs it nothing: the b-tree wrote an entry (and WAL) for every attempt.
    this.addSql(`drop index if exists "webhook_attempts_created_at_index";`);
    this.addSql(`create index "webhook_attempts_created_at_index" on "webhook_attempts" using brin ("created_at");`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop index if exists "webhook_attempts_created_at_index";`);
    this.addSql(`create index "webhook_attempts_created_at_index" on "webhook_attempts" ("created_at");`);
  }

}
