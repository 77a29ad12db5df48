// Crash safety: a round cut off mid-delivery loses no event. A round is one transaction that
// holds its row locks while its attempts run (dispatch's first attempts hold their events',
// the sender's retries their deliveries'); when its worker process is killed, or the
// database ends that transaction (as it does to a round left idle past its limit, or when
// the connection is lost), they are unlocked and sent again with their original delivery ids
// (at least once; Delivery rule 3: retries may produce duplicates), by another worker or by
// the same one, which goes on.
import { afterAll, afterEach, beforeAll, beforeEach, expect, test } from 'vitest';
import { startTestService, type TestService } from '../helpers/service.ts';
import { workerProcesses } from '../helpers/worker-process.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.ts';
import { createTask, deliveriesOf, eventually, subscribe, WEBHOOK_ENV } from './webhook-fixtures.ts';

let service: TestService;
let receiver: WebhookReceiver;
const workers = workerProcesses(() => service.databaseUrl);
/**
 * A worker process with this file's settings: a time-out far beyond the moment a test acts on
 * the attempts it holds, so the attempts are still in flight then however slowly it runs.
 */
const startWorkerProcess = () => workers.start({ ...WEBHOOK_ENV, WEBHOOK_TIMEOUT_MS: '60000' });

beforeAll(async () => {
  // The API only: the deliveries are sent by the worker processes each test starts, kills and stops.
  service = await startTestService({ env: { ...WEBHOOK_ENV, ROLE: 'api' } });
});

afterAll(async () => {
  await service?.stop();
});

// Each test has its own receiver and its own worker processes.
beforeEach(async () => {
  receiver = await startWebhookReceiver();
});

afterEach(async () => {
  await workers.stopAll();
  await receiver?.close();
});

/** A new account subscribed to Task Created at the receiver, with `events` tasks created: the subscription's id. */
async function subscriptionWithEvents(events: number): Promise<string> {
  const account = await service.createAccount();
  const subscriptionId = await subscribe(service, account.userId, { url: receiver.url, events: ['Task Created'] });
  for (let i = 0; i < events; i++) await createTask(service, account.apiKey);
  return subscriptionId;
}

/** Ends the round whose claim (matching `claim`) sits idle in its transaction while its attempts run. */
async function endRoundInFlight(claim: string): Promise<void> {
  const { rows } = await service.services.pool.query<{ ended: boolean }>(
    `select pg_terminate_backend(pid) as ended from pg_stat_activity
     where datname = current_database() and state = 'idle in transaction' and query like $1`,
    [claim],
  );
  expect(rows.map((row) => row.ended)).toEqual([true]);
}

/** Answers 200 from now on, releases the held attempts, and waits until the subscription's `count` deliveries succeeded. */
async function releaseAndWaitDelivered(held: PromiseWithResolvers<void>, subscriptionId: string, count: number) {
  receiver.respondWith(() => ({ status: 200 }));
  held.resolve();
  return eventually(
    () => deliveriesOf(service, subscriptionId),
    (list) => list.length === count && list.every((row) => row.status === 'succeeded'),
    40_000,
  );
}

test('a worker killed (SIGKILL) mid-delivery loses no event: every delivery reaches the receiver again with its original X-Webhook-Delivery', async () => {
  const EVENTS = 5;
  const subscriptionId = await subscriptionWithEvents(EVENTS);

  // The first worker's requests are held in flight (well past the moment it is killed).
  receiver.respondWith(() => ({ status: 200, delayMs: 120_000 }));
  const first = await startWorkerProcess();
  const inFlight = await receiver.waitFor(EVENTS, 20_000);
  const exited = new Promise((resolve) => first.once('exit', resolve));
  first.kill('SIGKILL');
  await exited;
  const heldIds = new Set(inFlight.slice(0, EVENTS).map((request) => request.headers['x-webhook-delivery'] as string));
  expect(heldIds.size).toBe(EVENTS);
  // Nothing was recorded as delivered: the attempts were cut off.
  expect((await deliveriesOf(service, subscriptionId)).every((row) => row.status === 'pending')).toBe(true);

  receiver.respondWith(() => ({ status: 200 }));
  const resentFrom = receiver.requests.length;
  await startWorkerProcess();
  const rows = await eventually(
    () => deliveriesOf(service, subscriptionId),
    (list) => list.length === EVENTS && list.every((row) => row.status === 'succeeded'),
    40_000,
  );
  const resent = receiver.requests.slice(resentFrom);
  const resentIds = new Set(resent.map((request) => request.headers['x-webhook-delivery'] as string));
  expect(resentIds).toEqual(heldIds);
  expect(new Set(rows.map((row) => row.id))).toEqual(heldIds);
  // The same event bodies as the cut-off attempts.
  const bodyOf = (requests: typeof resent, id: string) => requests.find((request) => request.headers['x-webhook-delivery'] === id)!.body;
  for (const id of heldIds) expect(bodyOf(resent, id)).toBe(bodyOf(inFlight, id));
});

test("a round whose transaction the database ends while its attempts run is sent again, with the same delivery ids, by the same worker process", async () => {
  const EVENTS = 4;
  const subscriptionId = await subscriptionWithEvents(EVENTS);

  // The first attempts are held in flight while the round's transaction is ended.
  const held = Promise.withResolvers<void>();
  receiver.respondWith(() => ({ status: 200, until: held.promise }));
  const worker = await startWorkerProcess();
  const inFlight = await receiver.waitFor(EVENTS, 20_000);
  const heldIds = new Set(inFlight.slice(0, EVENTS).map((request) => request.headers['x-webhook-delivery'] as string));
  expect(heldIds.size).toBe(EVENTS);
  await endRoundInFlight('%for update skip locked%');

  const delivered = await releaseAndWaitDelivered(held, subscriptionId, EVENTS);
  expect(new Set(delivered.map((row) => row.id))).toEqual(heldIds);
  // Each was received again after the cut-off attempts.
  const resent = receiver.requests.slice(EVENTS).map((request) => request.headers['x-webhook-delivery'] as string);
  expect(new Set(resent)).toEqual(heldIds);
  expect(worker.exitCode).toBe(null);
  expect(worker.signalCode).toBe(null);
});

test("a retry round whose transaction the database ends while its attempts run is sent again, with the same delivery ids and attempt number", async () => {
  const EVENTS = 3;
  const account = await service.createAccount();
  const subscriptionId = await subscribe(service, account.userId, { url: receiver.url, events: ['Task Created'], retries: true });
  // First attempts fail (503, retried a second later by the sender); the retries are held in flight.
  const held = Promise.withResolvers<void>();
  receiver.respondWith((request) => (request.headers['x-webhook-attempt'] === '1' ? { status: 503 } : { status: 200, until: held.promise }));
  const worker = await startWorkerProcess();
  for (let i = 0; i < EVENTS; i++) await createTask(service, account.apiKey);
  const retries = await receiver.waitFor((requests) => requests.filter((request) => request.headers['x-webhook-attempt'] === '2').length >= EVENTS, 20_000);
  const retryIds = new Set(retries.filter((request) => request.headers['x-webhook-attempt'] === '2').map((request) => request.headers['x-webhook-delivery'] as string));
  expect(retryIds.size).toBe(EVENTS);
  await endRoundInFlight('%webhook_deliveries%for update skip locked%');

  const cutOff = receiver.requests.length;
  const delivered = await releaseAndWaitDelivered(held, subscriptionId, EVENTS);
  expect(new Set(delivered.map((row) => row.id))).toEqual(retryIds);
  // Sent again as the second attempt each time: the cut-off one was never recorded.
  const resent = receiver.requests.slice(cutOff);
  expect(new Set(resent.map((request) => request.headers['x-webhook-delivery'] as string))).toEqual(retryIds);
  expect(resent.every((request) => request.headers['x-webhook-attempt'] === '2')).toBe(true);
  expect(delivered.every((row) => row.attempts === 2)).toBe(true);
  expect(worker.exitCode).toBe(null);
});

test('deleting a subscription while a round makes its first attempts waits for the round, which writes its delivery, and the deletion then removes it', async () => {
  const account = await service.createAccount({ webhooks: true });
  const subscriptionId = await subscribe(service, account.userId, { url: receiver.url, events: ['Task Created'] });
  const held = Promise.withResolvers<void>();
  receiver.respondWith(() => ({ status: 200, until: held.promise }));
  await startWorkerProcess();
  await createTask(service, account.apiKey);
  await receiver.waitFor(1, 20_000);

  let deletedAt: number | null = null;
  const deletion = service.request('DELETE', '/webhooks/1', { apiKey: account.apiKey }).then((response) => {
    deletedAt = Date.now();
    return response;
  });
  // The deletion waits on the round's hold of the subscription.
  await eventually(
    () => service.services.pool.query(`select 1 from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`),
    (result) => result.rowCount! > 0,
  );
  expect(deletedAt).toBe(null);
  const releasedAt = Date.now();
  held.resolve();
  expect((await deletion).status).toBe(200);
  expect(deletedAt!).toBeGreaterThanOrEqual(releasedAt);
  expect(await deliveriesOf(service, subscriptionId)).toEqual([]);
  // The round committed (its event is dispatched) rather than failing on the deleted subscription.
  const { rows } = await service.services.pool.query(`select dispatched_at is not null as dispatched from events where account_id = $1 and name = 'Task Created'`, [account.userId]);
  expect(rows).toEqual([{ dispatched: true }]);
});
