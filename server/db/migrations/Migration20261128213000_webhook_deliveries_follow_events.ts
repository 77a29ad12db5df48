import { Migration } from '@mikro-orm/migrations';

export class Migration20261128213000_webhook_deliveries_follow_events extends Migration {

  override name = 'Migration20261128213000_webhook_deliveries_follow_events';

  override up(): void | Promise<void> {
    // An event's deliveries go with it, as before (an account's deletion removes its events,
    // and so its deliveries on an agency's subscriptions too); what goes is the key's check
    // on every delivery written. Its one writer (write-deliveries.ts) writes deliveries only
    // for events its own transaction claimed and holds locked, so the check never found one
    // missing; it cost PostgreSQL about 20 µs per delivery (bench/db-work/webhook-delivery.ts).
    // The trigger removes a deleted event's deliveries by the index the key's cascade used.
    this.addSql(`alter table "webhook_deliveries" drop constraint "webhook_deliveries_event_id_foreign";`);
    this.addSql(`create or replace function "delete_event_webhook_deliveries"() returns trigger language plpgsql as $$
begin
  delete from webhook_deliveries where event_id = old.id and account_id = old.account_id;
  return null;
end;
$$;`);
    this.addSql(`create trigger "events_delete_webhook_deliveries" after delete on "events"
  for each row execute function "delete_event_webhook_deliveries"();`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop trigger "events_delete_webhook_deliveries" on "events";`);
    this.addSql(`drop function "delete_event_webhook_deliveries"();`);
    this.addSql(`delete from "webhook_deliveries" d where not exists (select from "events" e where e.id = d.event_id and e.account_id = d.account_id);`);
    this.addSql(`alter table "webhook_deliveries" add constraint "webhook_deliveries_event_id_foreign" foreign key ("event_id", "account_id") references "events" ("id", "account_id") on delete cascade;`);
  }

}
