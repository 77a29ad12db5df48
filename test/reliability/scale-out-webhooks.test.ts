// Two API processes and one worker process as one service: events raised through either API
// process reach a subscribed endpoint exactly once each when nothing fails.
import { afterAll, beforeAll, expect, test } from 'vitest';
import { startTestService, type TestService } from '../helpers/service.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.ts';
import { workerProcesses } from '../helpers/worker-process.ts';
import { createTask, deliveriesOf, eventually, subscribe, WEBHOOK_ENV } from '../webhooks/webhook-fixtures.ts';

const PER_PROCESS = 10;

let a: TestService;
let b: TestService;
let receiver: WebhookReceiver;
const workers = workerProcesses(() => a.databaseUrl, WEBHOOK_ENV);

beforeAll(async () => {
  receiver = await startWebhookReceiver();
  a = await startTestService({ env: { ...WEBHOOK_ENV, ROLE: 'api' } });
  b = await startTestService({ databaseUrl: a.databaseUrl, env: { ...WEBHOOK_ENV, ROLE: 'api' } });
});

afterAll(async () => {
  await workers.stopAll();
  await b?.stop();
  await a?.stop();
  await receiver?.close();
});

test('events created through two API processes are delivered once each by the worker process', async () => {
  const account = await a.createAccount();
  const subscriptionId = await subscribe(a, account.userId, { url: receiver.url, events: ['Task Created'] });
  await workers.start();
  await Promise.all(
    Array.from({ length: PER_PROCESS * 2 }, (_, i) => createTask(i % 2 ? b : a, account.apiKey)),
  );
  const rows = await eventually(
    () => deliveriesOf(a, subscriptionId),
    (list) => list.length === PER_PROCESS * 2 && list.every((row) => row.status === 'succeeded'),
    30_000,
  );
  const ids = receiver.requests.map((request) => request.headers['x-webhook-delivery'] as string);
  expect(new Set(ids).size).toBe(PER_PROCESS * 2);
  expect(ids).toHaveLength(PER_PROCESS * 2);
  expect(new Set(ids)).toEqual(new Set(rows.map((row) => row.id)));
  // One event per task, each delivered once.
  const eventIds = receiver.requests.map((request) => JSON.parse(request.body).event_id);
  expect(new Set(eventIds).size).toBe(PER_PROCESS * 2);
});
