import { Migration } from '@mikro-orm/migrations';

export class Migration20261129110000_events_written_dispatched extends Migration {

  override name = 'Migration20261129110000_events_written_dispatched';

  override up(): void | Promise<void> {
    // The event writer now writes an event that no subscription can receive as dispatched
    // (insert-events.ts): the dispatch trigger fires only for the others.
    this.addSql(`drop trigger "events_queue_webhook_dispatch" on "events";`);
    this.addSql(`create constraint trigger "events_queue_webhook_dispatch" after insert on "events" deferrable initially deferred
  for each row when (new.dispatched_at is null) execute function "queue_webhook_dispatch"();`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop trigger "events_queue_webhook_dispatch" on "events";`);
    this.addSql(`create constraint trigger "events_queue_webhook_dispatch" after insert on "events" deferrable initially deferred
  for each row execute function "queue_webhook_dispatch"();`);
  }

}
