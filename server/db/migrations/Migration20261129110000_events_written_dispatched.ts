import { Migration } from '@mikro-orm/migrations';

/**
 * (Exported for Migration20261129120000's `down`. MikroORM runs a migration file's first
 * exported function in its namespace's order, which is sorted: the class, `Migration…`,
 * comes before this one.)
 *
 * The dispatch trigger's function: once per transaction, queue the dispatch job unless one is
 * already waiting to start (Migration20261123224500); `check` runs first and may return early.
 */
export const queueDispatch = (check: string) => `create or replace function "queue_webhook_dispatch"() returns trigger language plpgsql as $$
begin
  if current_setting('app.webhook_dispatch_queued', true) = 'on' then
    return null;
  end if;
  if to_regnamespace('graphile_worker') is null then
    return null;
  end if;
${check}  perform set_config('app.webhook_dispatch_queued', 'on', true);
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
$$;`;

/** The check the function made before this migration: an account with no subscription to receive its events queues nothing. */
const SUBSCRIBED_ONLY = `  if not exists (
    select 1 from "webhook_subscriptions" s
    where s."enabled" and s."account_id" = new."account_id"
  ) and not exists (
    select 1 from "accounts" a
    join "webhook_subscriptions" s on s."account_id" = a."agency_id" and s."apply_to_sub_accounts" and s."enabled"
    where a."id" = new."account_id"
  ) then
    return null;
  end if;
`;

export class Migration20261129110000_events_written_dispatched extends Migration {

  override name = 'Migration20261129110000_events_written_dispatched';

  override up(): void | Promise<void> {
    // The event writer now writes an event that no subscription can receive as dispatched
    // (insert-events.ts, where that rule is written): the dispatch trigger fires only for the
    // others, and no longer checks the subscriptions itself.
    this.addSql(queueDispatch(''));
    this.addSql(`drop trigger "events_queue_webhook_dispatch" on "events";`);
    this.addSql(`create constraint trigger "events_queue_webhook_dispatch" after insert on "events" deferrable initially deferred
  for each row when (new.dispatched_at is null) execute function "queue_webhook_dispatch"();`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop trigger "events_queue_webhook_dispatch" on "events";`);
    this.addSql(`create constraint trigger "events_queue_webhook_dispatch" after insert on "events" deferrable initially deferred
  for each row execute function "queue_webhook_dispatch"();`);
    this.addSql(queueDispatch(SUBSCRIBED_ONLY));
  }

}
