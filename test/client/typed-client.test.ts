// The typed client package as an internal app uses it: imported by the package's own name
// (its `./client` export), pointed at a running service, calling queries and mutations over
// HTTPS and a subscription over WebSocket, with the types of AppRouter.
import { afterAll, beforeAll, expect, test } from 'vitest';
import { createClient, type MessagingClient } from 'messaging-automation-api/client';
import { startTestService, type TestService } from '../helpers/service.ts';

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

test('subscriptions go over one WebSocket', async () => {
  const client = createClient({ url: service.origin, apiKey: account.apiKey });
  try {
    const started = await new Promise<'started' | Error>((resolve) => {
      const subscription = client.chatWidgets.onConversationEvent.subscribe(
        {},
        {
          onStarted: () => {
            subscription.unsubscribe();
            resolve('started');
          },
          onError: (error) => resolve(error as Error),
        },
      );
    });
    expect(started).toBe('started');
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
    await expect(client.lists.list.query({})).rejects.toThrow();
  } finally {
    await client.close();
  }
});
