// A broadcast created through one of two API processes runs once: each contact is messaged
// exactly once, even when a second worker process joins while it runs.
import { afterAll, beforeAll, expect, test } from 'vitest';
import { startFakeMessagingProvider, type FakeMessagingProvider } from '../helpers/fake-messaging-provider.ts';
import { startTestService, type TestService } from '../helpers/service.ts';
import { workerProcesses } from '../helpers/worker-process.ts';
import { addTemplate, connectAccount, eventsOf, eventually, insertListContacts, MESSAGING_ALLOW_HOSTS } from '../messaging/send-template-fixtures.ts';

const CONTACTS = 200;

let a: TestService;
let b: TestService;
let fake: FakeMessagingProvider;
const workers = workerProcesses(() => a.databaseUrl);

beforeAll(async () => {
  fake = await startFakeMessagingProvider();
  const env = { MESSAGING_API_URL: fake.url, ROLE: 'api', ...MESSAGING_ALLOW_HOSTS };
  a = await startTestService({ env });
  b = await startTestService({ databaseUrl: a.databaseUrl, env });
});

afterAll(async () => {
  await workers.stopAll();
  await b?.stop();
  await a?.stop();
  await fake?.close();
});

test('a broadcast messages each contact once when a second worker process starts during it', async () => {
  const account = await a.createAccount({ credits: 1000 });
  await connectAccount(a, fake, account.userId, { phoneNumberId: 'scale-pn', token: 'scale-token' });
  const list = await a.request('POST', '/v1/lists', { apiKey: account.apiKey, body: { name: 'everyone' } });
  expect(list.status).toBe(201);
  await insertListContacts(a, account.userId, list.body.data.id, CONTACTS, () => false);
  const templateId = await addTemplate(a, account.userId, { name: 'news', body: 'News for {{first_name}}' });
  const created = await a.request('POST', '/v1/broadcasts', { apiKey: account.apiKey, body: { listId: list.body.data.id, whatsappTemplateId: templateId } });
  expect(created.status, created.text).toBe(201);
  const broadcastId = created.body.data.id;

  const env = { MESSAGING_API_URL: fake.url, BROADCAST_RATE_PER_SECOND: '40', ...MESSAGING_ALLOW_HOSTS };
  await workers.start(env);
  await fake.waitForSends(20, 30_000);
  await workers.start(env);
  const sentBeforeSecond = fake.sends().length;
  // Read through the other API process.
  const done = await eventually(
    async () => (await b.request('GET', `/v1/broadcasts/${broadcastId}`, { apiKey: account.apiKey })).body.data,
    (data) => data.status === 'completed',
    60_000,
  );
  // The second worker joined while sends were still going.
  expect(sentBeforeSecond).toBeLessThan(CONTACTS);
  expect(done.sent).toBe(CONTACTS);
  const perNumber = new Map<string, number>();
  for (const request of fake.sends()) perNumber.set(request.body.to, (perNumber.get(request.body.to) ?? 0) + 1);
  expect(perNumber.size).toBe(CONTACTS);
  expect([...perNumber.entries()].filter(([, count]) => count > 1)).toEqual([]);
  expect(fake.sends()).toHaveLength(CONTACTS);
  expect(await eventsOf(a, account.userId, 'Broadcast Started')).toHaveLength(1);
  expect(await eventsOf(a, account.userId, 'Broadcast Completed')).toHaveLength(1);
});
