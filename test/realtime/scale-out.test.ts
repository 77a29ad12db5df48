// Two API processes on one database: a visitor connected to one hears a widget message
// posted to the other, because every process hears every commit through PostgreSQL. Both
// are real OS processes (nothing shared but the database); the in-process service only
// makes the account.
import { afterAll, beforeAll, expect, test } from 'vitest';
import { startTestService, type TestService } from '../helpers/service.ts';
import { serviceProcesses, type ListeningServiceProcess } from '../helpers/service-processes.ts';
import { call } from '../reliability/fixtures.ts';
import { connectVisitor, isMessage, type Visitor } from './widget-fixtures.ts';

const processes = serviceProcesses();
let fixtures: TestService;
let first: ListeningServiceProcess;
let second: ListeningServiceProcess;
const visitors: Visitor[] = [];

beforeAll(async () => {
  fixtures = await startTestService({ env: { ROLE: 'api' } });
  [first, second] = await Promise.all([
    processes.spawn({ role: 'api', databaseUrl: fixtures.databaseUrl }),
    processes.spawn({ role: 'api', databaseUrl: fixtures.databaseUrl }),
  ]);
});
afterAll(async () => {
  for (const visitor of visitors) visitor.close();
  await processes.stopAll();
  await fixtures?.stop();
});

test('a visitor connected to one process hears a widget message posted to another', async () => {
  const account = await fixtures.createAccount();
  const created = await call(first.origin, 'POST', '/v1/chat-widgets', { apiKey: account.apiKey, body: { name: 'Support', settings: { greeting: 'Hello there' } } });
  expect(created.status, created.text).toBe(201);
  const widgetId: string = created.body.data.id;
  const visitorId = 'visitor-scale';
  const post = (through: ListeningServiceProcess, body: string) =>
    call(through.origin, 'POST', `/v1/incoming-chat-widget-message?userId=${account.userId}`, {
      body: { messageType: 'text', customData: { body, fromId: visitorId, toId: widgetId } },
    });

  const onSecond = await connectVisitor(second.origin, { configId: widgetId, visitorId });
  visitors.push(onSecond);
  const onFirst = await connectVisitor(first.origin, { configId: widgetId, visitorId });
  visitors.push(onFirst);

  expect((await post(first, 'posted to the first process')).status).toBe(200);
  await onSecond.waitFor(isMessage('posted to the first process'));
  await onFirst.waitFor(isMessage('posted to the first process'));

  expect((await post(second, 'posted to the second process')).status).toBe(200);
  const heardOnFirst = await onFirst.waitFor(isMessage('posted to the second process'));
  await onSecond.waitFor(isMessage('posted to the second process'));
  // The greeting is written with the first message, so it is heard with it.
  expect(heardOnFirst.filter((heard) => heard.name === 'message').map((heard) => (heard.payload as { body: string }).body)).toEqual([
    'posted to the first process',
    'Hello there',
    'posted to the second process',
  ]);
});
