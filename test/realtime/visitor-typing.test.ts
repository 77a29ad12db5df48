// A widget visitor's typing reaches the account's conversation feed (kind visitor-typing),
// paced per socket however fast the page reports, ended when they pause or their socket
// closes, and never echoed to the visitor's own room.
import { afterAll, beforeAll, expect, test } from 'vitest';
import type { ConversationEvent } from '../../server/realtime/conversation-event.ts';
import { startTestService, type TestService } from '../helpers/service.ts';
import { connectVisitor, heardUntilNow, insertWidget } from './widget-fixtures.ts';

let service: TestService;
let accountId: string;
let widgetId: string;

beforeAll(async () => {
  service = await startTestService();
  ({ userId: accountId } = await service.createAccount());
  widgetId = await insertWidget(service, accountId);
});
afterAll(async () => {
  await service?.stop();
});

/** The account's visitor-typing events as this process's feed hears them. */
function listen(): { events: (ConversationEvent & { kind: 'visitor-typing' })[]; waitFor(count: number): Promise<void>; stop(): void } {
  const events: (ConversationEvent & { kind: 'visitor-typing' })[] = [];
  let wake = () => {};
  const stop = service.services.conversationEvents.subscribe((event) => {
    if (event.kind === 'visitor-typing' && event.accountId === accountId) {
      events.push(event);
      wake();
    }
  });
  return {
    events,
    stop,
    async waitFor(count) {
      const deadline = Date.now() + 20_000;
      while (events.length < count) {
        if (Date.now() > deadline) throw new Error(`heard ${JSON.stringify(events)}`);
        await new Promise<void>((resolve) => {
          wake = resolve;
          setTimeout(resolve, 200).unref();
        });
      }
    },
  };
}

async function firstMessage(visitorId: string): Promise<string> {
  const sent = await service.request('POST', '/incoming-chat-widget-message', {
    query: { userId: accountId },
    body: { messageType: 'text', customData: { body: 'hello', fromId: visitorId, toId: widgetId } },
  });
  expect(sent.status, sent.text).toBe(200);
  const { rows } = await service.services.pool.query<{ id: string }>('select id from contacts where chat_widget_id = $1 and widget_visitor_id = $2', [
    widgetId,
    visitorId,
  ]);
  return rows[0]!.id;
}

test("a visitor's typing is announced to the account once per interval, then its end, and not to the visitor", async () => {
  const contactId = await firstMessage('visitor-typing-a');
  const feed = listen();
  const visitor = await connectVisitor(service.origin, { configId: widgetId, visitorId: 'visitor-typing-a' });
  try {
    // A page reporting far faster than it should: one announcement.
    for (let index = 0; index < 20; index += 1) visitor.socket.emit('typing', { typing: true });
    visitor.socket.emit('typing', { typing: false });
    visitor.socket.emit('typing', { typing: false });
    await feed.waitFor(2);
    // A message published now reaches the visitor after anything announced before it: an echo
    // of its typing, or a late announcement, would be heard by then.
    const heard = await heardUntilNow(service, { accountId, widgetId, visitorId: 'visitor-typing-a', contactId }, visitor);
    expect(feed.events.map((event) => [event.contactId, event.widgetId, event.visitorId, event.isVisitorTyping])).toEqual([
      [contactId, widgetId, 'visitor-typing-a', true],
      [contactId, widgetId, 'visitor-typing-a', false],
    ]);
    // The visitor's own socket is never told of its own typing.
    expect(heard.filter((entry) => JSON.stringify(entry.payload).includes('isVisitorTyping'))).toEqual([]);
  } finally {
    visitor.close();
    feed.stop();
  }
});

test('a socket that closes while its visitor types announces the end', async () => {
  await firstMessage('visitor-typing-b');
  const feed = listen();
  const visitor = await connectVisitor(service.origin, { configId: widgetId, visitorId: 'visitor-typing-b' });
  try {
    visitor.socket.emit('typing', { typing: true });
    await feed.waitFor(1);
    visitor.close();
    await feed.waitFor(2);
    expect(feed.events.map((event) => event.isVisitorTyping)).toEqual([true, false]);
  } finally {
    feed.stop();
  }
});

test('a visitor who has written nothing is nobody the account knows: nothing is announced', async () => {
  const feed = listen();
  const stranger = await connectVisitor(service.origin, { configId: widgetId, visitorId: 'visitor-typing-none' });
  const known = await connectVisitor(service.origin, { configId: widgetId, visitorId: 'visitor-typing-c' });
  try {
    await firstMessage('visitor-typing-c');
    stranger.socket.emit('typing', { typing: true });
    known.socket.emit('typing', { typing: true });
    await feed.waitFor(1);
    // The stranger's report went first on its own socket; only the known visitor's is heard.
    expect(feed.events.map((event) => event.visitorId)).toEqual(['visitor-typing-c']);
  } finally {
    stranger.close();
    known.close();
    feed.stop();
  }
});
