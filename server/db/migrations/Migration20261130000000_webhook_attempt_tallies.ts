import { Migration } from '@mikro-orm/migrations';

export class Migration20261130000000_webhook_attempt_tallies extends Migration {

  override name = 'Migration20261130000000_webhook_attempt_tallies';

  override up(): void | Promise<void> {
    // The metrics' webhook figures read tallies (server/webhooks/attempt-tallies.ts) instead of
    // every attempt of the window: a scrape's cost no longer grows with the delivery rate.
    // Unlogged, as rate_counters: a crash loses only recent figures, and a round's tally
    // writes no WAL. The attempts' time index served only that read.
    this.addSql(`create unlogged table "webhook_attempt_tallies" ("slice" timestamptz not null, "slot" int not null, "delivered" int not null, "failed" int not null, "durations" int[] not null, primary key ("slice", "slot"));`);
    this.addSql(`comment on table "webhook_attempt_tallies" is 'not distributed: webhook attempts counted per slice of time for the whole installation (metrics); a coordinator-local table';`);
    this.addSql(`drop index "webhook_attempts_created_at_index";`);
  }

  override down(): void | Promise<void> {
    this.addSql(`create index "webhook_attempts_created_at_index" on "webhook_attempts" using brin ("created_at") with (pages_per_range = 16);`);
    this.addSql(`drop table "webhook_attempt_tallies";`);
  }

}
