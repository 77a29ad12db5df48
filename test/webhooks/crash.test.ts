// Crash safety: a worker process killed mid-delivery loses no event. Its leases expire
// and another worker sends the same deliveries again, with their original delivery ids
// (at least once; Delivery rule 3: retries may produce duplicates).
import { afterAll, beforeAll, expect, test } from 'vitest';
import { startTestService, type TestService } from '../helpers/service.ts';
import { workerProcesses } from '../helpers/worker-process.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.ts';
import { createTask, deliveriesOf, eventually, subscribe, WEBHOOK_ENV } from './webhook-fixtures.ts';

const EVENTS = 5;

let service: TestService;
let receiver: WebhookReceiver;
const workers = workerProcesses(() => service.databaseUrl);
/** A worker process with this test's settings. */
const startWorkerProcess = () => workers.start({ ...WEBHOOK_ENV, WEBHOOK_TIMEOUT_MS: '2000' });

beforeAll(async () => {
  // The API only: the deliveries are sent by the worker processes this test starts and kills.
  service = await startTestService({ env: { ...WEBHOOK_ENV, ROLE: 'api' } });
  receiver = await startWebhookReceiver();
});

afterAll(async () => {
  await workers.stopAll();
  await receiver?.close();
  await service?.stop();
});

test('a worker killed (SIGKILL) mid-delivery loses no event: every delivery reaches the receiver again with its original X-Webhook-Delivery', async () => {
  const account = await service.createAccount();
  const subscriptionId = await subscribe(service, account.userId, { url: receiver.url, events: ['Task Created'] });
  for (let i = 0; i < EVENTS; i++) await createTask(service, account.apiKey);

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
