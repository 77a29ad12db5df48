import { Migration } from '@mikro-orm/migrations';

// Prompt pickup from the outbox: when a transaction that wrote an event commits, a
// `dispatch-webhook-events` job is queued (one per transaction, one pending job overall
// thanks to its job key), and Graphile Worker's insert notification wakes a worker at once.
//
// - A deferred constraint trigger runs at commit, so the job row (which every emitting
//   transaction shares through the job key) is locked only for the commit, not for the
//   whole transaction that emitted the event.
// - Only events of accounts with a subscription that could receive them queue a job; any
//   other event is marked dispatched by the per-minute safety net.
// - Our migrations run before Graphile Worker's, and an API-only process never migrates
//   its schema: plpgsql resolves `graphile_worker.add_job` when called, and the function
//   skips the job while that schema does not exist (the cron picks the event up later).
export class Migration20261123213500_webhook_dispatch_trigger extends Migration {

  override name = 'Migration20261123213500_webhook_dispatch_trigger';

  override up(): void | Promise<void> {
    this.addSql(`create or replace function "queue_webhook_dispatch"() returns trigger language plpgsql as $$
begin
  if current_setting('app.webhook_dispatch_queued', true) = 'on' then
    return null;
  end if;
  if to_regnamespace('graphile_worker') is null then
    return null;
  end if;
  if not exists (
    select 1 from "webhook_subscriptions" s
    where s."enabled" and s."account_id" = new."account_id"
  ) and not exists (
    select 1 from "accounts" a
    join "webhook_subscriptions" s on s."account_id" = a."agency_id" and s."apply_to_sub_accounts" and s."enabled"
    where a."id" = new."account_id"
  ) then
    return null;
  end if;
  perform graphile_worker.add_job('dispatch-webhook-events', '{}'::json, job_key => 'dispatch-webhook-events', max_attempts => 5);
  perform set_config('app.webhook_dispatch_queued', 'on', true);
  return null;
end;
$$;`);
    this.addSql(`create constraint trigger "events_queue_webhook_dispatch" after insert on "events" deferrable initially deferred for each row execute function "queue_webhook_dispatch"();`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop trigger if exists "events_queue_webhook_dispatch" on "events";`);
    this.addSql(`drop function if exists "queue_webhook_dispatch"();`);
  }

}
