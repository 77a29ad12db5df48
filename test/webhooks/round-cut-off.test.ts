// A sending round is one transaction that holds its deliveries' row locks while their
// attempts run. When the database ends that transaction mid-round (as it does to a round
// left idle past its limit, or when the connection is lost), the deliveries are unlocked and
// sent again with their original ids (at least once), and the worker process goes on.
import { afterAll, beforeAll, expect, test } from 'vitest';
import { startTestService, type TestService } from '../helpers/service.ts';
import { workerProcesses } from '../helpers/worker-process.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.ts';
import { createTask, deliveriesOf, eventually, subscribe, WEBHOOK_ENV } from './webhook-fixtures.ts';

const EVENTS = 4;

let service: TestService;
let receiver: WebhookReceiver;
const workers = workerProcesses(() => service.databaseUrl);

beforeAll(async () => {
  service = await startTestService({ env: { ...WEBHOOK_ENV, ROLE: 'api' } });
  receiver = await startWebhookReceiver();
});

afterAll(async () => {
  await workers.stopAll();
  await receiver?.close();
  await service?.stop();
});

test("a round whose transaction the database ends while its attempts run is sent again, with the same delivery ids, by the same worker process", async () => {
  const account = await service.createAccount();
  const subscriptionId = await subscribe(service, account.userId, { url: receiver.url, events: ['Task Created'] });
  for (let i = 0; i < EVENTS; i++) await createTask(service, account.apiKey);

  // The first attempts are held in flight while the round's transaction is ended.
  receiver.respondWith(() => ({ status: 200, delayMs: 1_500 }));
  const worker = await workers.start({ ...WEBHOOK_ENV, WEBHOOK_TIMEOUT_MS: '2000' });
  const inFlight = await receiver.waitFor(EVENTS, 20_000);
  const heldIds = new Set(inFlight.slice(0, EVENTS).map((request) => request.headers['x-webhook-delivery'] as string));
  expect(heldIds.size).toBe(EVENTS);
  const { rows } = await service.services.pool.query<{ ended: boolean }>(
    `select pg_terminate_backend(pid) as ended from pg_stat_activity
     where datname = current_database() and state = 'idle in transaction' and query like '%webhook_deliveries%for update skip locked%'`,
  );
  expect(rows.map((row) => row.ended)).toEqual([true]);

  receiver.respondWith(() => ({ status: 200 }));
  const delivered = await eventually(
    () => deliveriesOf(service, subscriptionId),
    (list) => list.length === EVENTS && list.every((row) => row.status === 'succeeded'),
    40_000,
  );
  expect(new Set(delivered.map((row) => row.id))).toEqual(heldIds);
  // Each was received again after the cut-off attempts.
  const resent = receiver.requests.slice(EVENTS).map((request) => request.headers['x-webhook-delivery'] as string);
  expect(new Set(resent)).toEqual(heldIds);
  expect(worker.exitCode).toBe(null);
  expect(worker.signalCode).toBe(null);
});
