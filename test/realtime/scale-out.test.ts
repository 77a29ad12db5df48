// Two API processes on one database: a visitor connected to one hears what the other (or
// the worker) stored, because every process hears every commit through PostgreSQL.
import { afterAll, beforeAll, expect, test } from 'vitest';
import { startTestService, type TestService } from '../helpers/service.ts';
import { connectVisitor, insertWidget, isMessage, messageEvent, publish, type Target } from './widget-fixtures.ts';

let first: TestService;
let second: TestService;
let target: Target;

beforeAll(async () => {
  first = await startTestService();
  second = await startTestService({ databaseUrl: first.databaseUrl });
  const { userId } = await first.createAccount();
  const widgetId = await insertWidget(first, userId);
  target = { accountId: userId, widgetId, visitorId: 'visitor-scale', contactId: 'ct_scale' };
});
afterAll(async () => {
  await second?.stop();
  await first?.stop();
});

test('a visitor connected to one process hears an event published through another', async () => {
  const onSecond = await connectVisitor(second.origin, { configId: target.widgetId, visitorId: target.visitorId });
  const onFirst = await connectVisitor(first.origin, { configId: target.widgetId, visitorId: target.visitorId });
  try {
    const event = messageEvent(target, 'stored by the first process');
    await publish(first, event);
    expect(await onSecond.waitFor(isMessage('stored by the first process'))).toEqual([{ name: 'message', payload: event.message }]);
    expect(await onFirst.waitFor(isMessage('stored by the first process'))).toEqual([{ name: 'message', payload: event.message }]);

    const back = messageEvent(target, 'stored by the second process');
    await publish(second, back);
    expect((await onFirst.waitFor(isMessage('stored by the second process'))).map((heard) => heard.payload)).toEqual([event.message, back.message]);
  } finally {
    onSecond.close();
    onFirst.close();
  }
});
