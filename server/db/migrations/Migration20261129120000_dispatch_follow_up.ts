import { Migration } from '@mikro-orm/migrations';
import { queueDispatch } from './Migration20261129110000_events_written_dispatched.ts';

/**
 * The dispatch trigger's function, once per transaction. While a dispatch job runs, an
 * emitting commit no longer adds a job due at once (which a free worker slot locked at
 * once, only to find the running pass and end, so that the next commit added another: tens
 * of jobs a second under load, each added by a commit that notified, and notifying commits
 * go one at a time). It adds a follow-up due FOLLOW_UP later instead, which later commits
 * find waiting; the running job makes it due at once when its pass ends having dispatched
 * (workers/dispatch-webhook-events.ts), so a commit that landed after that pass's last look
 * waits for no poll. A job waiting (due, or a follow-up) is left to run; with none, one is
 * added due at once, as before.
 */
const FOLLOW_UP = `interval '250 milliseconds'`;

const queueDispatchOrFollowUp = `create or replace function "queue_webhook_dispatch"() returns trigger language plpgsql as $$
declare
  running boolean;
begin
  if current_setting('app.webhook_dispatch_queued', true) = 'on' then
    return null;
  end if;
  if to_regnamespace('graphile_worker') is null then
    return null;
  end if;
  perform set_config('app.webhook_dispatch_queued', 'on', true);
  select j.locked_at is not null into running
    from graphile_worker._private_jobs j
   where j.key = 'dispatch-webhook-events' and j.attempts < j.max_attempts;
  if found and not running then
    return null;
  end if;
  perform graphile_worker.add_job('dispatch-webhook-events', '{}'::json,
    run_at => case when running then now() + ${FOLLOW_UP} end,
    job_key => 'dispatch-webhook-events', max_attempts => 5);
  return null;
end;
$$;`;

export class Migration20261129120000_dispatch_follow_up extends Migration {

  override name = 'Migration20261129120000_dispatch_follow_up';

  override up(): void | Promise<void> {
    this.addSql(queueDispatchOrFollowUp);
  }

  override down(): void | Promise<void> {
    this.addSql(queueDispatch(''));
  }

}
