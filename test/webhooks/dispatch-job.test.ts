// The dispatch job as the dispatch trigger adds it: one due at once when none is there,
// nothing more while one waits, and while one runs a single follow-up due a moment later,
// which the running job makes due at once when its pass ends; and its runs in one process,
// of which one at a time looks. On a service without a worker (ROLE=api), so the jobs stay
// as the commits left them; a running job is one locked by hand, as a worker locks it, and
// the task's runs are called here as a worker calls them.
import type { JobHelpers } from 'graphile-worker';
import { afterAll, beforeAll, beforeEach, expect, test } from 'vitest';
import { createOutboundClient } from '../../server/outbound/http-client.ts';
import { SENDER_CLIENT_LIMITS } from '../../server/webhooks/send-deliveries.ts';
import { dispatchWebhookEventsTask } from '../../workers/dispatch-webhook-events.ts';
import { webhookSenderDeps } from '../../workers/send-webhook-deliveries.ts';
import { eventsOf, insertEventsSql, newEventRow } from '../../server/events/sql/insert-events.ts';
import { DISPATCH_WEBHOOK_EVENTS_TASK, followUpNow } from '../../server/webhooks/sql/dispatch-follow-up.ts';
import { startTestService, type TestService } from '../helpers/service.ts';
import { subscribe, WEBHOOK_ENV } from './webhook-fixtures.ts';

let service: TestService;
let accountId: string;

beforeAll(async () => {
  service = await startTestService({ env: { ...WEBHOOK_ENV, ROLE: 'api' } });
  accountId = (await service.createAccount()).userId;
  // No worker runs, so nothing is ever sent to it.
  await subscribe(service, accountId, { url: 'https://127.0.0.1:9/hooks', events: ['Task Created'] });
});

afterAll(async () => {
  await service?.stop();
});

beforeEach(async () => {
  await service.services.pool.query(
    `delete from graphile_worker._private_jobs j using graphile_worker._private_tasks t where t.id = j.task_id and t.identifier = $1`,
    [DISPATCH_WEBHOOK_EVENTS_TASK],
  );
});

/** Commits one event the account's subscription can receive, in a transaction of its own. */
async function commitEvent(): Promise<void> {
  await service.services.pool.query(insertEventsSql(eventsOf(accountId, [newEventRow('Task Created', {})])).statement());
}

/** A dispatch job; `addedDueInMs`: how long after it was added it was due (both are the adding transaction's clock, so exact). */
type DispatchJob = { keyed: boolean; locked: boolean; due: boolean; addedDueInMs: number; revision: number };

/** Every dispatch job there is, the running (locked) ones first. */
async function dispatchJobs(): Promise<DispatchJob[]> {
  const { rows } = await service.services.pool.query<DispatchJob>(
    `select j.key is not null as keyed, j.locked_at is not null as locked, j.run_at <= now() as due,
            round(extract(epoch from j.run_at - j.created_at) * 1000)::int as "addedDueInMs", j.revision
       from graphile_worker._private_jobs j join graphile_worker._private_tasks t on t.id = j.task_id
      where t.identifier = $1
      order by j.locked_at is null, j.id`,
    [DISPATCH_WEBHOOK_EVENTS_TASK],
  );
  return rows;
}

/** Locks the waiting dispatch job as a worker does when it starts running it. */
async function startRunning(): Promise<void> {
  const { rowCount } = await service.services.pool.query(
    `update graphile_worker._private_jobs set locked_at = now(), locked_by = 'dispatch-job.test' where key = $1 and locked_at is null`,
    [DISPATCH_WEBHOOK_EVENTS_TASK],
  );
  expect(rowCount).toBe(1);
}

test('with no dispatch job, a commit adds one due at once; while it waits, later commits add nothing and leave it as it is', async () => {
  await commitEvent();
  expect(await dispatchJobs()).toEqual([{ keyed: true, locked: false, due: true, addedDueInMs: 0, revision: 0 }]);
  await commitEvent();
  await commitEvent();
  expect(await dispatchJobs()).toEqual([{ keyed: true, locked: false, due: true, addedDueInMs: 0, revision: 0 }]);
});

test('while a dispatch job runs, commits add one follow-up due a moment later, which the run makes due at once when it ends', async () => {
  await commitEvent();
  await startRunning();
  for (let commit = 0; commit < 3; commit++) await commitEvent();
  // Whether the quarter-second has passed by now depends on the machine: the follow-up is
  // read as added, and then put an hour off so that the run's ending is what makes it due.
  expect(await dispatchJobs()).toMatchObject([
    { keyed: false, locked: true, addedDueInMs: 0, revision: 0 },
    { keyed: true, locked: false, addedDueInMs: 250, revision: 0 },
  ]);
  await service.services.pool.query(`update graphile_worker._private_jobs set run_at = now() + interval '1 hour' where key = $1`, [DISPATCH_WEBHOOK_EVENTS_TASK]);
  await followUpNow(service.services.pool);
  expect(await dispatchJobs()).toMatchObject([
    { keyed: false, locked: true, revision: 0 },
    { keyed: true, locked: false, due: true, revision: 1 },
  ]);
});

test('a run ending with no follow-up waiting adds no job', async () => {
  await followUpNow(service.services.pool);
  expect(await dispatchJobs()).toEqual([]);
  await commitEvent();
  await followUpNow(service.services.pool);
  expect(await dispatchJobs()).toEqual([{ keyed: true, locked: false, due: true, addedDueInMs: 0, revision: 0 }]);
});

test("a run that starts while another of the process's runs is looking wakes its pass once and ends; the event is dispatched", async () => {
  const client = createOutboundClient({ timeoutMs: 2_000, allowHosts: ['127.0.0.1'], ...SENDER_CLIENT_LIMITS });
  const deps = webhookSenderDeps(service.services, client);
  const task = dispatchWebhookEventsTask(deps, service.services.log);
  const helpers = { abortSignal: new AbortController().signal } as unknown as JobHelpers;
  const pool = service.services.pool;
  // The subscription's row locked here holds the first run's claim (it takes the rows it
  // routes to `for key share`) until released: its pass is running, and it looks no more.
  const holder = await pool.connect();
  try {
    await holder.query('begin');
    await holder.query('select id from webhook_subscriptions where account_id = $1 for update', [accountId]);
    await commitEvent();
    const looking = task({}, helpers);
    for (let tries = 0; ; tries++) {
      const { rows } = await pool.query(`select 1 from pg_stat_activity where wait_event_type = 'Lock' and query like '%with claimed as%'`);
      if (rows.length > 0) break;
      // Bounded generously: a busy machine may take a while to run the first look.
      if (tries > 800) throw new Error('the first run never reached its claim');
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    const before = deps.state.dispatchPasses.wakeUps;
    await task({}, helpers);
    // One wake-up, joining the running pass; a second loop of looks would have joined it every
    // 20 ms until it had found nothing for a tenth of a second.
    expect(deps.state.dispatchPasses.wakeUps - before).toBe(1);
    await holder.query('rollback');
    await looking;
  } finally {
    holder.release();
    await client.close();
  }
  const { rows } = await pool.query<{ n: number }>(`select count(*)::int as n from events where account_id = $1 and dispatched_at is null`, [accountId]);
  expect(rows[0]!.n).toBe(0);
});
