import { Migration } from '@mikro-orm/migrations';

export class Migration20261129000000_webhook_attempts_follow_events extends Migration {

  override name = 'Migration20261129000000_webhook_attempts_follow_events';

  override up(): void | Promise<void> {
    // A delivery whose first attempt succeeds is recorded by its attempt alone: no delivery row
    // (webhook_deliveries holds what is still to send or may be replayed: pending, failed,
    // dropped). The attempt names its event, so the delivery log finds the event's name
    // without the delivery, and the attempts go with their event and with their subscription
    // rather than with a delivery row that may not exist. The index by delivery, which only
    // that deletion read, gives way to one by event: still one entry per attempt written.
    this.addSql(`alter table "webhook_attempts" add column "event_id" text;`);
    this.addSql(`update "webhook_attempts" a set "event_id" = d."event_id" from "webhook_deliveries" d where d."id" = a."delivery_id" and d."account_id" = a."account_id";`);
    this.addSql(`delete from "webhook_attempts" where "event_id" is null;`);
    // A worker of an earlier version, still running while a deployment rolls over, writes
    // attempts without their event (and a delivery row for every attempt): the event is read
    // from that delivery, so the attempt shows in the log and goes with its event. The column
    // stays nullable for that writer; the one writer of this version always sets it, and pays
    // only the trigger's condition.
    this.addSql(`create or replace function "fill_webhook_attempt_event"() returns trigger language plpgsql as $$
begin
  select d.event_id into new.event_id from webhook_deliveries d where d.id = new.delivery_id and d.account_id = new.account_id;
  return new;
end;
$$;`);
    this.addSql(`create trigger "webhook_attempts_fill_event" before insert on "webhook_attempts"
  for each row when (new.event_id is null) execute function "fill_webhook_attempt_event"();`);
    this.addSql(`create index "webhook_attempts_event_id_index" on "webhook_attempts" ("event_id");`);
    this.addSql(`drop index "webhook_attempts_delivery_id_attempt_index";`);

    this.addSql(`drop trigger "webhook_deliveries_delete_attempts" on "webhook_deliveries";`);
    this.addSql(`drop function "delete_webhook_delivery_attempts"();`);
    // An event's deletion (its account's, through the events' key) takes its deliveries and attempts.
    this.addSql(`create or replace function "delete_event_webhook_deliveries"() returns trigger language plpgsql as $$
begin
  delete from webhook_deliveries where event_id = old.id and account_id = old.account_id;
  delete from webhook_attempts where event_id = old.id and account_id = old.account_id;
  return null;
end;
$$;`);
    // A subscription's deletion takes its delivery log (its deliveries go by their key), the
    // attempts of every account it delivered for, along the log's own index.
    this.addSql(`create or replace function "delete_webhook_subscription_attempts"() returns trigger language plpgsql as $$
begin
  delete from webhook_attempts where subscription_id = old.id;
  return null;
end;
$$;`);
    this.addSql(`create trigger "webhook_subscriptions_delete_attempts" after delete on "webhook_subscriptions"
  for each row execute function "delete_webhook_subscription_attempts"();`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop trigger "webhook_attempts_fill_event" on "webhook_attempts";`);
    this.addSql(`drop function "fill_webhook_attempt_event"();`);
    this.addSql(`drop trigger "webhook_subscriptions_delete_attempts" on "webhook_subscriptions";`);
    this.addSql(`drop function "delete_webhook_subscription_attempts"();`);
    this.addSql(`create or replace function "delete_event_webhook_deliveries"() returns trigger language plpgsql as $$
begin
  delete from webhook_deliveries where event_id = old.id and account_id = old.account_id;
  return null;
end;
$$;`);
    // Successes recorded by their attempt alone get back the delivery row the older writer kept.
    this.addSql(`insert into "webhook_deliveries" ("id", "event_id", "subscription_id", "account_id", "status", "attempts", "first_attempt_at", "last_status_code", "created_at", "updated_at")
  select a."delivery_id", a."event_id", a."subscription_id", a."account_id", 'succeeded', a."attempt", a."created_at", a."status_code", a."created_at", a."created_at"
  from "webhook_attempts" a
  where not exists (select from "webhook_deliveries" d where d."id" = a."delivery_id" and d."account_id" = a."account_id");`);
    this.addSql(`create index "webhook_attempts_delivery_id_attempt_index" on "webhook_attempts" ("delivery_id", "attempt");`);
    this.addSql(`create or replace function "delete_webhook_delivery_attempts"() returns trigger language plpgsql as $$
begin
  delete from webhook_attempts where delivery_id = old.id and account_id = old.account_id;
  return null;
end;
$$;`);
    this.addSql(`create trigger "webhook_deliveries_delete_attempts" after delete on "webhook_deliveries"
  for each row execute function "delete_webhook_delivery_attempts"();`);
    this.addSql(`drop index "webhook_attempts_event_id_index";`);
    this.addSql(`alter table "webhook_attempts" drop column "event_id";`);
  }

}
