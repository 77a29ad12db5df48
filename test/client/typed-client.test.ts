// The typed client package as an internal app uses it: imported by the package's own name
// (its `./client` export), pointed at a running service, calling queries and mutations over
// HTTPS and a subscription over WebSocket, with the types of AppRouter.
import { afterAll, beforeAll, expect, test } from 'vitest';
import { createClient, type MessagingClient } from 'messaging-automation-api/client';
import type { ConversationEvent } from '../../server/realtime/conversation-event.ts';
import { startTestService, type TestService } from '../helpers/service.ts';
import { insertWidget, messageEvent, publish } from '../realtime/widget-fixtures.ts';

let service: TestService;
let account: { userId: string; apiKey: string };
const nodeEnv = process.env.NODE_ENV;

beforeAll(async () => {
  service = await startTestService();
  account = await service.createAccount();
  // The generated certificate is self-signed, which the client accepts in development only.
  process.env.NODE_ENV = 'development';
});
afterAll(async () => {
  process.env.NODE_ENV = nodeEnv;
  await service?.stop();
});

test('queries and mutations are typed calls over HTTPS', async () => {
  const client: MessagingClient = createClient({ url: service.origin, apiKey: account.apiKey });
  try {
    const created = await client.lists.create.mutate({ name: 'From the client' });
    expect(created.data.name).toBe('From the client');
    const page = await client.lists.list.query({});
    expect(page.lists.map((list) => list.id)).toContain(created.data.id);
  } finally {
    await client.close();
  }
});

test("the service's errors arrive with their status and code", async () => {
  const client = createClient({ url: `${service.origin}/trpc`, apiKey: 'mk_not_a_key' });
  try {
    await expect(client.lists.list.query({})).rejects.toMatchObject({ data: { code: 'UNAUTHORIZED', httpStatus: 401 } });
  } finally {
    await client.close();
  }
});

test('subscriptions go over one WebSocket and deliver the account\'s events', async () => {
  const widgetId = await insertWidget(service, account.userId);
  const target = { accountId: account.userId, widgetId, visitorId: 'visitor-client', contactId: 'ct_client' };
  const client = createClient({ url: service.origin, apiKey: account.apiKey });
  try {
    const received: unknown[] = [];
    let failure: unknown = null;
    let started = false;
    const subscription = client.chatWidgets.onConversationEvent.subscribe(
      {},
      {
        onStarted: () => {
          started = true;
        },
        onData: (data) => received.push(data),
        onError: (error) => {
          failure = error;
        },
      },
    );
    try {
      // The server may attach its listener a moment after onStarted: publish until heard.
      const deadline = Date.now() + 10_000;
      const published: ConversationEvent[] = [];
      while (received.length === 0 && failure === null) {
        if (Date.now() > deadline) throw new Error(`no event arrived within 10 s (started: ${started})`);
        if (started) {
          const event = messageEvent(target, 'over the client');
          published.push(event);
          await publish(service, event);
        }
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect(failure).toBeNull();
      expect(started).toBe(true);
      // Exactly one of the events published, as published but for the visitor id (never sent to subscribers).
      expect(received[0]).toMatchObject({ accountId: account.userId, widgetId, kind: 'message', message: { body: 'over the client' } });
      expect(published.map(({ visitorId: _visitorId, ...frame }) => frame)).toContainEqual(received[0]);
    } finally {
      subscription.unsubscribe();
    }
  } finally {
    await client.close();
  }
});

test('a self-signed certificate is accepted only in development, and plain HTTP never', () => {
  process.env.NODE_ENV = 'production';
  try {
    expect(() => createClient({ url: service.origin, apiKey: account.apiKey, allowSelfSignedCertificate: true })).toThrow(/development/);
  } finally {
    process.env.NODE_ENV = 'development';
  }
  expect(() => createClient({ url: service.origin.replace('https:', 'http:'), apiKey: account.apiKey })).toThrow(/https/);
});

test('outside development the certificate is checked: a self-signed service is refused', async () => {
  process.env.NODE_ENV = 'production';
  const client = createClient({ url: service.origin, apiKey: account.apiKey });
  process.env.NODE_ENV = 'development';
  try {
    // Refused by the TLS certificate check itself (not by the service, nor for another reason).
    await expect(client.lists.list.query({})).rejects.toMatchObject({
      name: 'TRPCClientError',
      cause: { cause: { code: expect.stringMatching(/^(DEPTH_ZERO_SELF_SIGNED_CERT|SELF_SIGNED_CERT_IN_CHAIN)$/) } },
    });
  } finally {
    await client.close();
  }
});
