// Conversation events travel through PostgreSQL NOTIFY on the transaction of the change:
// heard by every API process when, and only if, the change commits.
import { afterAll, beforeAll, expect, test } from 'vitest';
import { createContact } from '../../server/contacts/create-contact.ts';
import { recordMessage } from '../../server/messages/record-message.ts';
import { publishConversationEvent } from '../../server/realtime/publish-conversation-events.ts';
import { LISTENER_APPLICATION_NAME } from '../../server/realtime/conversation-event-feed.ts';
import { streamConversationEvents } from '../../server/realtime/stream-conversation-events.ts';
import type { ConversationEvent } from '../../server/realtime/conversation-event.ts';
import { startTestService, type TestService } from '../helpers/service.ts';
import { conversationMessage, insertWidget, messageEvent, publish, type Target } from './widget-fixtures.ts';

let service: TestService;
let target: Target;

beforeAll(async () => {
  service = await startTestService();
  const { userId } = await service.createAccount();
  const widgetId = await insertWidget(service, userId);
  target = { accountId: userId, widgetId, visitorId: 'visitor-events-1', contactId: 'ct_unused' };
});
afterAll(async () => {
  await service?.stop();
});

/** Everything this process hears until `until` matches (the events published before it included). */
function listen(until: (event: ConversationEvent) => boolean) {
  const heard: ConversationEvent[] = [];
  let unsubscribe = () => {};
  const done = new Promise<ConversationEvent[]>((resolve) => {
    unsubscribe = service.services.conversationEvents.subscribe((event) => {
      heard.push(event);
      if (until(event)) resolve(heard);
    });
  });
  return { done: done.finally(() => unsubscribe()), heard };
}

const bodyIs = (body: string) => (event: ConversationEvent) => event.kind === 'message' && event.message.body === body;

test('an event published in a transaction that rolls back is never heard; one that commits is heard once', async () => {
  const listening = listen(bodyIs('committed'));
  const rolledBack = messageEvent(target, 'rolled back');
  await expect(
    service.services.orm.em.fork().transactional(async (tx) => {
      await publishConversationEvent(tx, rolledBack);
      throw new Error('the change fails');
    }),
  ).rejects.toThrow('the change fails');
  const committed = messageEvent(target, 'committed');
  await publish(service, committed);
  // NOTIFY delivers in commit order on the one LISTEN connection: the rolled-back event
  // would have arrived first.
  const heard = await listening.done;
  expect(heard).toEqual([committed]);

  // Heard once: a later event arrives with nothing repeated before it.
  const next = listen(bodyIs('after'));
  await publish(service, messageEvent(target, 'after'));
  expect((await next.done).map((event) => (event.kind === 'message' ? event.message.body : event.kind))).toEqual(['after']);
});

test('events announced after a commit, by calls made at once, are heard once each, in the order of the calls and of each call', async () => {
  const listening = listen(bodyIs('announced 5'));
  const feed = service.services.conversationEvents;
  // Made without waiting: the later calls go out together, in one statement, after the first.
  const calls = [
    feed.announce([messageEvent(target, 'announced 1'), messageEvent(target, 'announced 2')]),
    feed.announce([messageEvent(target, 'announced 3')]),
    feed.announce([messageEvent(target, 'announced 4'), messageEvent(target, 'announced 5')]),
  ];
  await Promise.all(calls);
  const heard = await listening.done;
  expect(heard.map((event) => (event.kind === 'message' ? event.message.body : event.kind))).toEqual([1, 2, 3, 4, 5].map((n) => `announced ${n}`));
});

test("an account's stream hears what is published once it is opened, before it is first read (a subscription's `started` comes between)", async () => {
  const feed = service.services.conversationEvents;
  const stopped = new AbortController();
  const stream = streamConversationEvents(feed, target.accountId, {}, stopped.signal);
  // The first event reaches this process's listeners before the stream is read.
  const delivered = listen(bodyIs('before the stream was read'));
  await publish(service, messageEvent(target, 'before the stream was read'));
  await delivered.done;
  const first = stream.next();
  await publish(service, messageEvent(target, 'after the stream was read'));
  const bodyOf = (result: IteratorResult<unknown>) => (result.value as { message?: { body: string } } | undefined)?.message?.body;
  expect(bodyOf(await first)).toBe('before the stream was read');
  expect(bodyOf(await stream.next())).toBe('after the stream was read');

  // Stopped by its signal: it ends, and hears nothing more.
  stopped.abort();
  expect(await stream.next()).toEqual({ done: true, value: undefined });
});

test('a stream aborted before it is read ends at its first read', async () => {
  const feed = service.services.conversationEvents;
  const stopped = new AbortController();
  const stream = streamConversationEvents(feed, target.accountId, {}, stopped.signal);
  stopped.abort();
  const listening = listen(bodyIs('after the abort'));
  await publish(service, messageEvent(target, 'after the abort'));
  await listening.done;
  expect(await stream.next()).toEqual({ done: true, value: undefined });
});

test('typing and read events reach subscribers as published', async () => {
  const listening = listen((event) => event.kind === 'read');
  const typing: ConversationEvent = { ...target, kind: 'typing', isBotTyping: true };
  const read: ConversationEvent = { ...target, kind: 'read', messageSids: ['msg_a', 'msg_b'] };
  await publish(service, typing);
  await publish(service, read);
  expect(await listening.done).toEqual([typing, read]);
});

test('a read event naming more messages than one NOTIFY payload holds is heard as several read events naming them all, in order', async () => {
  const messageSids = Array.from({ length: 1_000 }, (_, index) => `msg_read_${String(index).padStart(6, '0')}`);
  const last = messageSids.at(-1)!;
  const listening = listen((event) => event.kind === 'read' && event.messageSids.includes(last));
  await publish(service, { ...target, kind: 'read', messageSids });
  const heard = await listening.done;
  expect(heard.length).toBeGreaterThan(1);
  for (const event of heard) expect(event).toEqual({ ...target, kind: 'read', messageSids: expect.any(Array) });
  expect(heard.flatMap((event) => (event.kind === 'read' ? event.messageSids : []))).toEqual(messageSids);
});

test('a message too large for a NOTIFY payload is announced by id and loaded by the listening process', async () => {
  const em = service.services.orm.em.fork();
  const { contactId } = await createContact(em, target.accountId, { phoneNumber: '+14155550101' } as never);
  const body = 'long reply '.repeat(1000);
  const listening = listen(bodyIs(body));
  await service.services.orm.em.fork().transactional(async (tx) => {
    const recorded = await recordMessage(tx, target.accountId, { contactId, direction: 'outbound', body });
    await publishConversationEvent(tx, {
      ...target,
      contactId,
      kind: 'message',
      message: { ...conversationMessage(body), messageSid: recorded.messageId },
    });
  });
  const [event] = await listening.done;
  expect(event).toMatchObject({ kind: 'message', contactId, widgetId: target.widgetId, visitorId: target.visitorId });
  expect(event.kind === 'message' && event.message).toMatchObject({ body, direction: 'outbound', status: 'sent', type: 'text', mediaUrl: null });
  expect(event.kind === 'message' && Buffer.byteLength(JSON.stringify(event))).toBeGreaterThan(8000);
});

test('when the database drops the listening connection, the process reconnects and hears later events', async () => {
  const { rows } = await service.services.pool.query<{ terminated: boolean }>(
    `select pg_terminate_backend(pid) as terminated from pg_stat_activity
      where application_name = $1 and datname = current_database()`,
    [LISTENER_APPLICATION_NAME],
  );
  expect(rows.map((row) => row.terminated)).toEqual([true]);
  // Events published while it is away are lost to it (the page refetches); publish until one
  // is heard after the reconnection.
  let attempt = 0;
  let heard = false;
  const listening = listen((event) => event.kind === 'message' && event.message.body.startsWith('after reconnect'));
  void listening.done.then(() => {
    heard = true;
  });
  while (!heard) {
    attempt += 1;
    await publish(service, messageEvent(target, `after reconnect ${attempt}`));
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const { rows: listeners } = await service.services.pool.query(
    `select 1 from pg_stat_activity where application_name = $1 and datname = current_database()`,
    [LISTENER_APPLICATION_NAME],
  );
  expect(listeners).toHaveLength(1);
});
