// Crash safety: a worker process killed (SIGKILL) half-way through a broadcast, then a new
// worker process. No contact is messaged twice: recipients the dead run had claimed are
// failed, never sent again, since the provider may already have sent them; the rest are
// sent and the broadcast completes with every recipient accounted for.
import { afterAll, beforeAll, expect, test } from 'vitest';
import { INTERRUPTED_ERROR } from '../../server/broadcasts/record-recipient-outcome.ts';
import { startFakeMessagingProvider, type FakeMessagingProvider } from '../helpers/fake-messaging-provider.ts';
import { startTestService, type TestService } from '../helpers/service.ts';
import { workerProcesses } from '../helpers/worker-process.ts';
import { addTemplate, connectAccount, eventsOf, eventually, insertListContacts, MESSAGING_ALLOW_HOSTS } from '../messaging/send-template-fixtures.ts';

const CONTACTS = 500;

let service: TestService;
let fake: FakeMessagingProvider;
const workers = workerProcesses(() => service.databaseUrl);
/** A worker process with this test's settings. */
const startWorkerProcess = () => workers.start({ MESSAGING_API_URL: fake.url, BROADCAST_RATE_PER_SECOND: '200', ...MESSAGING_ALLOW_HOSTS });

beforeAll(async () => {
  fake = await startFakeMessagingProvider();
  // The API only: the broadcast is run by the worker processes this test starts and kills.
  service = await startTestService({ env: { MESSAGING_API_URL: fake.url, ROLE: 'api', ...MESSAGING_ALLOW_HOSTS } });
});

afterAll(async () => {
  await workers.stopAll();
  await service?.stop();
  await fake?.close();
});

test('a broadcast whose worker is killed half-way resumes in a new worker and messages no contact twice', async () => {
  const account = await service.createAccount({ credits: 1000 });
  await connectAccount(service, fake, account.userId, { phoneNumberId: 'crash-pn', token: 'crash-token' });
  const list = await service.request('POST', '/v1/lists', { apiKey: account.apiKey, body: { name: 'everyone' } });
  expect(list.status).toBe(201);
  await insertListContacts(service, account.userId, list.body.data.id, CONTACTS, (i) => i % 100 === 7);
  const templateId = await addTemplate(service, account.userId, { name: 'news', body: 'News for {{first_name}}' });
  const created = await service.request('POST', '/v1/broadcasts', { apiKey: account.apiKey, body: { listId: list.body.data.id, whatsappTemplateId: templateId } });
  expect(created.status, created.text).toBe(201);
  const broadcastId = created.body.data.id;

  // The provider holds its answer to the 250th send, so the first worker is killed in the
  // middle of that call: the provider has the message, the database has no outcome.
  const HELD = CONTACTS / 2;
  fake.answerSendsWith((_request, index) => (index === HELD - 1 ? { status: 200, body: { messages: [{ id: 'wamid.held' }] }, delayMs: 120_000 } : undefined));
  const first = await startWorkerProcess();
  const held = (await fake.waitForSends(HELD, 60_000))[HELD - 1]!;
  const exited = new Promise((resolve) => first.once('exit', resolve));
  first.kill('SIGKILL');
  await exited;
  const sentBeforeKill = fake.sends().length;
  const cutOff = (await service.request('GET', `/v1/broadcasts/${broadcastId}`, { apiKey: account.apiKey })).body.data;
  expect(cutOff.status).toBe('running');
  expect(cutOff.sent + cutOff.failed + cutOff.skipped).toBeLessThan(CONTACTS);

  await startWorkerProcess();
  const done = await eventually(
    async () => (await service.request('GET', `/v1/broadcasts/${broadcastId}`, { apiKey: account.apiKey })).body.data,
    (data) => data.status === 'completed',
    90_000,
  );

  // No one messaged twice.
  const perNumber = new Map<string, number>();
  for (const request of fake.sends()) perNumber.set(request.body.to, (perNumber.get(request.body.to) ?? 0) + 1);
  expect([...perNumber.entries()].filter(([, count]) => count > 1)).toEqual([]);
  expect(fake.sends().length).toBeGreaterThan(sentBeforeKill);

  // Every recipient accounted for, and the counters equal the recipients' outcomes.
  expect(done.total).toBe(CONTACTS);
  expect(done.sent + done.failed + done.skipped).toBe(CONTACTS);
  expect(done.skipped).toBe(5);
  const { rows } = await service.services.pool.query<{ status: string; error: string | null; n: number }>(
    `select status, error, count(*)::int as n from broadcast_recipients where broadcast_id = $1 group by status, error order by status`,
    [broadcastId],
  );
  const count = (status: string) => rows.filter((row) => row.status === status).reduce((sum, row) => sum + row.n, 0);
  expect(count('sent')).toBe(done.sent);
  expect(count('skipped')).toBe(done.skipped);
  expect(count('failed')).toBe(done.failed);
  // The recipient whose send was cut off is failed, not messaged again.
  const { rows: heldRows } = await service.services.pool.query(
    `select r.status, r.error from broadcast_recipients r join contacts c on c.id = r.contact_id
      where r.broadcast_id = $1 and replace(c.phone_number, '+', '') = $2`,
    [broadcastId, held.body.to],
  );
  expect(heldRows).toEqual([{ status: 'failed', error: INTERRUPTED_ERROR }]);
  // Only the run that died left recipients unfinished, and each of those failed as interrupted.
  expect(rows.filter((row) => row.status === 'failed').every((row) => row.error === INTERRUPTED_ERROR)).toBe(true);
  // Every sent recipient is one provider send; an interrupted one may have reached the provider at most once.
  expect(fake.sends().length).toBeGreaterThanOrEqual(done.sent);
  expect(fake.sends().length - done.sent).toBeLessThanOrEqual(done.failed);

  expect(await eventsOf(service, account.userId, 'Broadcast Started')).toHaveLength(1);
  expect(await eventsOf(service, account.userId, 'Broadcast Completed')).toEqual([
    expect.objectContaining({ data: { broadcast_id: broadcastId, total: CONTACTS, sent: done.sent, failed: done.failed, skipped: done.skipped } }),
  ]);
}, 180_000);
