// A broadcast created through one of two API processes runs once: each contact is messaged
// exactly once, even when a second worker process joins while it runs. The API and worker
// processes are real OS processes; the in-process service (ROLE=api) only writes the
// fixtures (account, connection, list, template) and reads the database.
import { afterAll, beforeAll, expect, test } from 'vitest';
import { startFakeMessagingProvider, type FakeMessagingProvider } from '../helpers/fake-messaging-provider.ts';
import { startTestService, type TestService } from '../helpers/service.ts';
import { serviceProcesses, type ListeningServiceProcess } from '../helpers/service-processes.ts';
import { addTemplate, connectAccount, eventsOf, eventually, insertListContacts, MESSAGING_ALLOW_HOSTS } from '../messaging/send-template-fixtures.ts';
import { call } from './fixtures.ts';

const CONTACTS = 200;
/** Sends answered before the provider holds its answers until the second worker has joined. */
const ANSWERED_FIRST = 20;

const processes = serviceProcesses();
let fixtures: TestService;
let a: ListeningServiceProcess;
let b: ListeningServiceProcess;
let fake: FakeMessagingProvider;
let env: Record<string, string>;

beforeAll(async () => {
  fake = await startFakeMessagingProvider();
  // Held answers must not time out in the worker while the second one starts on a busy machine.
  env = { MESSAGING_API_URL: fake.url, MESSAGING_TIMEOUT_MS: '120000', BROADCAST_RATE_PER_SECOND: '200', ...MESSAGING_ALLOW_HOSTS };
  fixtures = await startTestService({ env: { ...env, ROLE: 'api' } });
  [a, b] = await Promise.all([
    processes.spawn({ role: 'api', databaseUrl: fixtures.databaseUrl, env }),
    processes.spawn({ role: 'api', databaseUrl: fixtures.databaseUrl, env }),
  ]);
});

afterAll(async () => {
  await processes.stopAll();
  await fixtures?.stop();
  await fake?.close();
});

/** The waiting run of the broadcast (its look-in: a live run keeps one queued for later). */
async function queuedRunAt(broadcastId: string): Promise<number | undefined> {
  const { rows } = await fixtures.services.pool.query<{ run_at: number }>(
    `select extract(epoch from run_at)::float8 as run_at from graphile_worker.jobs where key = $1 and locked_at is null`,
    [broadcastId],
  );
  return rows[0]?.run_at;
}

test('a broadcast messages each contact once when a second worker process starts during it', async () => {
  const account = await fixtures.createAccount({ credits: 1000 });
  await connectAccount(fixtures, fake, account.userId, { phoneNumberId: 'scale-pn', token: 'scale-token' });
  const list = await call(a.origin, 'POST', '/v1/lists', { apiKey: account.apiKey, body: { name: 'everyone' } });
  expect(list.status, list.text).toBe(201);
  await insertListContacts(fixtures, account.userId, list.body.data.id, CONTACTS, () => false);
  const templateId = await addTemplate(fixtures, account.userId, { name: 'news', body: 'News for {{first_name}}' });
  const created = await call(a.origin, 'POST', '/v1/broadcasts', { apiKey: account.apiKey, body: { listId: list.body.data.id, whatsappTemplateId: templateId } });
  expect(created.status, created.text).toBe(201);
  const broadcastId: string = created.body.data.id;

  // After the first sends the provider holds its answers until the test opens the gate, so
  // the broadcast is still running, whatever the speed of the machine, when the second
  // worker joins.
  let openGate!: () => void;
  const gate = new Promise<void>((resolve) => (openGate = resolve));
  fake.answerSendsWith((_request, index) =>
    index < ANSWERED_FIRST ? undefined : { status: 200, body: { messages: [{ id: `wamid.held.${index}` }] }, heldUntil: gate },
  );
  try {
    await processes.spawn({ role: 'worker', databaseUrl: fixtures.databaseUrl, env });
    await fake.waitForSends(ANSWERED_FIRST + 1, 30_000);
    await processes.spawn({ role: 'worker', databaseUrl: fixtures.databaseUrl, env });
    const running = await call(b.origin, 'GET', `/v1/broadcasts/${broadcastId}`, { apiKey: account.apiKey });
    expect(running.body.data.status).toBe('running');
    const sentBeforeSecond = fake.sends().length;
    expect(sentBeforeSecond).toBeLessThan(CONTACTS);
    // Keep the answers held until the broadcast's queued look-in has come due and been
    // taken by a worker (either process) while the first run is live: it must not run it
    // a second time, only queue the next look-in.
    const lookIn = await eventually(() => queuedRunAt(broadcastId), (runAt) => runAt !== undefined, 30_000);
    await eventually(() => queuedRunAt(broadcastId), (runAt) => runAt !== undefined && runAt > lookIn!, 30_000);
  } finally {
    openGate();
  }

  // Read through the other API process.
  const done = await eventually(
    async () => (await call(b.origin, 'GET', `/v1/broadcasts/${broadcastId}`, { apiKey: account.apiKey })).body.data,
    (data) => data.status === 'completed',
    60_000,
  );
  expect(done.sent).toBe(CONTACTS);
  const perNumber = new Map<string, number>();
  for (const request of fake.sends()) perNumber.set(request.body.to, (perNumber.get(request.body.to) ?? 0) + 1);
  expect(perNumber.size).toBe(CONTACTS);
  expect([...perNumber.entries()].filter(([, count]) => count > 1)).toEqual([]);
  expect(fake.sends()).toHaveLength(CONTACTS);
  expect(await eventsOf(fixtures, account.userId, 'Broadcast Started')).toHaveLength(1);
  expect(await eventsOf(fixtures, account.userId, 'Broadcast Completed')).toHaveLength(1);
}, 120_000);
