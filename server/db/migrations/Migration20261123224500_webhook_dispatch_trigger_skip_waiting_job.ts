import { Migration } from '@mikro-orm/migrations';

// The dispatch trigger writes the keyed job row only when no dispatch job is already
// waiting to start. Before, every emitting commit updated that one row (and sent Graphile
// Worker's insert notification), so emitting transactions committed one at a time.
//
// A job that is due, unlocked and not out of attempts will start and claim every event
// committed by then, this one included; otherwise (none, or the one there is running,
// backing off after a failure, or dead) the job is added as before. Skipping reads the
// row without locking it: should the worker lock that job just before this commit becomes
// visible, its run's look once more after a short pause (the task's settle) catches the
// event, as it does for the keyed add_job's own race; the per-minute cron catches the rest.
export class Migration20261123224500_webhook_dispatch_trigger_skip_waiting_job extends Migration {

  override name = 'Migration20261123224500_webhook_dispatch_trigger_skip_waiting_job';

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
  perform set_config('app.webhook_dispatch_queued', 'on', true);
  if exists (
    select 1 from graphile_worker._private_jobs j
    where j.key = 'dispatch-webhook-events'
      and j.locked_at is null
      and j.run_at <= now()
      and j.attempts < j.max_attempts
  ) then
    return null;
  end if;
  perform graphile_worker.add_job('dispatch-webhook-events', '{}'::json, job_key => 'dispatch-webhook-events', max_attempts => 5);
  return null;
end;
$$;`);
  }

  override down(): void | Promise<void> {
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
  }

}
