// Internal apps subscribe to their account's conversation events over /trpc WebSockets
// (chatWidgets.onConversationEvent): every event of the account, never another account's.
import { createTRPCClient, createWSClient, wsLink } from '@trpc/client';
import WebSocket from 'ws';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { conversationEventsProcedure } from '../../routers/chat-widgets/subscription.ts';
import type { ConversationEvent } from '../../server/realtime/conversation-event.ts';
import type { ConversationFrame } from '../../server/realtime/stream-conversation-events.ts';
import { router } from '../../server/trpc.ts';
import { startTestService, type TestService } from '../helpers/service.ts';
import { openRawTrpcSocket } from '../helpers/trpc-socket.ts';
import { insertWidget, messageEvent, publish, type Target } from './widget-fixtures.ts';

// The procedure on its own router, served by the real host the way appRouter serves it, so
// this test does not wait for the chat-widgets router to mount it.
const subscriptionRouter = router({ chatWidgets: router({ onConversationEvent: conversationEventsProcedure }) });
type SubscriptionRouter = typeof subscriptionRouter;

let service: TestService;
let mine: { apiKey: string; widget: Target; otherWidget: Target };
let theirs: Target;

beforeAll(async () => {
  service = await startTestService({ definition: { router: subscriptionRouter } });
  const account = await service.createAccount();
  const other = await service.createAccount();
  const widgetId = await insertWidget(service, account.userId);
  const otherWidgetId = await insertWidget(service, account.userId);
  mine = {
    apiKey: account.apiKey,
    widget: { accountId: account.userId, widgetId, visitorId: 'visitor-trpc', contactId: 'ct_trpc' },
    otherWidget: { accountId: account.userId, widgetId: otherWidgetId, visitorId: 'visitor-trpc', contactId: 'ct_trpc2' },
  };
  theirs = { accountId: other.userId, widgetId: await insertWidget(service, other.userId), visitorId: 'visitor-theirs', contactId: 'ct_theirs' };
});
afterAll(async () => {
  await service?.stop();
});

const PROBE_CONTACT = 'ct_probe';

/** What a subscriber hears of an event: all of it but the visitor id. */
function frameOf({ visitorId: _visitorId, ...frame }: ConversationEvent) {
  return frame;
}

function wsClient(apiKey: string) {
  return createWSClient({
    url: `${service.origin.replace('https', 'wss')}/trpc?apiKey=${apiKey}`,
    WebSocket: class extends WebSocket {
      constructor(url: string | URL, protocols?: string | string[]) {
        super(url, protocols, { rejectUnauthorized: false });
      }
    } as never,
  });
}

/**
 * Subscribes and collects events until `count` arrived. Resolves once the subscription has
 * heard a probe published after it started, so the events a test publishes next are heard.
 */
async function subscribe(apiKey: string, input: { widgetId?: string } | undefined, count: number) {
  const ws = wsClient(apiKey);
  const client = createTRPCClient<SubscriptionRouter>({ links: [wsLink({ client: ws })] });
  const events: ConversationFrame[] = [];
  let heardProbe = false;
  const probeUntilHeard = async () => {
    while (!heardProbe) {
      await publish(service, { ...mine.widget, contactId: PROBE_CONTACT, kind: 'typing', isBotTyping: false });
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };
  let started!: () => void;
  let failed!: (error: unknown) => void;
  const ready = new Promise<void>((resolve, reject) => {
    started = resolve;
    failed = reject;
  });
  let finished!: (events: ConversationFrame[]) => void;
  const done = new Promise<ConversationFrame[]>((resolve) => {
    finished = resolve;
  });
  const subscription = client.chatWidgets.onConversationEvent.subscribe(input, {
    onStarted: () => void probeUntilHeard(),
    onData: (data) => {
      const event = data as ConversationFrame;
      if (event.contactId === PROBE_CONTACT) {
        heardProbe = true;
        started();
        return;
      }
      events.push(event);
      if (events.length === count) finished(events);
    },
    onError: (error) => failed(error),
  });
  await ready;
  return {
    done,
    async close() {
      subscription.unsubscribe();
      await ws.close();
    },
  };
}

test("a subscription hears the account's events, in order, and never another account's", async () => {
  const subscription = await subscribe(mine.apiKey, undefined, 3);
  try {
    await publish(service, messageEvent(theirs, 'for another account'));
    const message = messageEvent(mine.widget, 'for this account');
    await publish(service, message);
    await publish(service, { ...theirs, kind: 'typing', isBotTyping: true });
    const typing: ConversationEvent = { ...mine.otherWidget, kind: 'typing', isBotTyping: true };
    await publish(service, typing);
    const read: ConversationEvent = { ...mine.widget, kind: 'read', messageSids: [message.message.messageSid] };
    await publish(service, read);
    expect(await subscription.done).toEqual([message, typing, read].map(frameOf));
  } finally {
    await subscription.close();
  }
});

test('a subscription can be narrowed to one widget', async () => {
  const subscription = await subscribe(mine.apiKey, { widgetId: mine.widget.widgetId }, 1);
  try {
    await publish(service, messageEvent(mine.otherWidget, 'other widget'));
    const wanted = messageEvent(mine.widget, 'this widget');
    await publish(service, wanted);
    expect(await subscription.done).toEqual([frameOf(wanted)]);
  } finally {
    await subscription.close();
  }
});

test('a subscription without a valid key is refused: its socket hears UNAUTHORIZED and is closed (policy violation)', async () => {
  const socket = await openRawTrpcSocket(service.origin, { apiKey: 'not-a-key' });
  socket.send({ id: 1, method: 'subscription', params: { path: 'chatWidgets.onConversationEvent', input: {} } });
  const refusal = await socket.waitFor((frame) => frame.id === null);
  expect(refusal.error).toMatchObject({ data: { code: 'UNAUTHORIZED', httpStatus: 401 } });
  expect(await socket.closed).toBe(1008);
  expect(socket.frames.some((frame) => frame.id === 1 && frame.result)).toBe(false);
});
