// Two API processes and one worker process as one service: events raised through either API
// process reach a subscribed endpoint exactly once each when nothing fails. All three are
// real OS processes; the in-process service only makes the account and the subscription and
// reads the delivery rows.
import { afterAll, beforeAll, expect, test } from 'vitest';
import { startTestService, type TestService } from '../helpers/service.ts';
import { serviceProcesses, type ListeningServiceProcess } from '../helpers/service-processes.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.ts';
import { deliveriesOf, eventually, subscribe, WEBHOOK_ENV } from '../webhooks/webhook-fixtures.ts';
import { call } from './fixtures.ts';

const PER_PROCESS = 10;

const processes = serviceProcesses();
let fixtures: TestService;
let a: ListeningServiceProcess;
let b: ListeningServiceProcess;
let receiver: WebhookReceiver;

beforeAll(async () => {
  receiver = await startWebhookReceiver();
  fixtures = await startTestService({ env: { ...WEBHOOK_ENV, ROLE: 'api' } });
  [a, b] = await Promise.all([
    processes.spawn({ role: 'api', databaseUrl: fixtures.databaseUrl, env: WEBHOOK_ENV }),
    processes.spawn({ role: 'api', databaseUrl: fixtures.databaseUrl, env: WEBHOOK_ENV }),
  ]);
});

afterAll(async () => {
  await processes.stopAll();
  await fixtures?.stop();
  await receiver?.close();
});

test('events created through two API processes are delivered once each by the worker process', async () => {
  const account = await fixtures.createAccount();
  const subscriptionId = await subscribe(fixtures, account.userId, { url: receiver.url, events: ['Task Created'] });
  await processes.spawn({ role: 'worker', databaseUrl: fixtures.databaseUrl, env: WEBHOOK_ENV });
  const created = await Promise.all(
    Array.from({ length: PER_PROCESS * 2 }, (_, i) => call((i % 2 ? b : a).origin, 'POST', '/v1/tasks', { apiKey: account.apiKey, body: { title: 'Call back' } })),
  );
  expect(created.map((answer) => answer.status)).toEqual(Array(PER_PROCESS * 2).fill(201));
  const rows = await eventually(
    () => deliveriesOf(fixtures, subscriptionId),
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
