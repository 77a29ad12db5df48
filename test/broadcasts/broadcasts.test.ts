// Broadcasts over real HTTPS with the real worker and the fake provider: a template sent to
// every contact of a list, its progress readable while it runs, each contact messaged once.
import { afterAll, beforeAll, expect, test } from 'vitest';
import { startFakeMessagingProvider, type FakeMessagingProvider } from '../helpers/fake-messaging-provider.ts';
import { startTestService, type TestService } from '../helpers/service.ts';
import { addTemplate, connectAccount, createContact, creditsOf, eventsOf, eventually, insertListContacts, MESSAGING_ALLOW_HOSTS } from '../messaging/send-template-fixtures.ts';

let service: TestService;
let fake: FakeMessagingProvider;
let connections = 0;

beforeAll(async () => {
  fake = await startFakeMessagingProvider();
  service = await startTestService({ env: { MESSAGING_API_URL: fake.url, BROADCAST_RATE_PER_SECOND: '200', ...MESSAGING_ALLOW_HOSTS } });
});
afterAll(async () => {
  await service?.stop();
  await fake?.close();
});

async function connectedAccount(credits: number) {
  const account = await service.createAccount({ credits });
  connections += 1;
  await connectAccount(service, fake, account.userId, { phoneNumberId: `bc-pn-${connections}`, token: `bc-token-${connections}` });
  return account;
}

async function createList(apiKey: string): Promise<string> {
  const created = await service.request('POST', '/v1/lists', { apiKey, body: { name: `list ${Date.now()}-${Math.random()}` } });
  expect(created.status, created.text).toBe(201);
  return created.body.data.id;
}

function sendsFor(phoneNumberId: string) {
  return fake.sends().filter((request) => request.path.includes(`/${phoneNumberId}/messages`));
}

async function waitForCompletion(apiKey: string, broadcastId: string) {
  return eventually(
    async () => (await service.request('GET', `/v1/broadcasts/${broadcastId}`, { apiKey })).body.data,
    (data) => data?.status === 'completed',
    60_000,
  );
}

test('a broadcast sends the template to every contact of the list once, skips do-not-disturb contacts, and announces its start and completion once each', async () => {
  const account = await connectedAccount(1000);
  const listId = await createList(account.apiKey);
  await insertListContacts(service, account.userId, listId, 500, (i) => i % 50 === 0);
  // A contact outside the list gets nothing.
  await createContact(service, account.apiKey, { firstName: 'Outsider' });
  const templateId = await addTemplate(service, account.userId, { name: 'sale', body: 'Hi {{first_name|there}}, the sale is on' });

  const created = await service.request('POST', '/v1/broadcasts', { apiKey: account.apiKey, body: { listId, whatsappTemplateId: templateId } });
  expect(created.status, created.text).toBe(201);
  expect(created.body).toEqual({
    success: true,
    data: {
      id: expect.stringMatching(/^bc_/),
      list_id: listId,
      whatsapp_template_id: templateId,
      status: 'queued',
      total: 0,
      sent: 0,
      failed: 0,
      skipped: 0,
      error: null,
      created_at: expect.any(String),
      started_at: null,
      completed_at: null,
    },
  });
  const broadcastId = created.body.data.id;

  const done = await waitForCompletion(account.apiKey, broadcastId);
  expect(done).toMatchObject({ status: 'completed', total: 500, sent: 490, failed: 0, skipped: 10, error: null });
  expect(done.started_at).not.toBeNull();
  expect(done.completed_at).not.toBeNull();

  const sends = sendsFor(`bc-pn-${connections}`);
  const perNumber = new Map<string, number>();
  for (const request of sends) perNumber.set(request.body.to, (perNumber.get(request.body.to) ?? 0) + 1);
  expect(sends).toHaveLength(490);
  expect([...perNumber.values()].every((count) => count === 1)).toBe(true);
  expect(sends.some((request) => request.body.template.components[0].parameters[0].text === 'Outsider')).toBe(false);

  const { rows } = await service.services.pool.query(
    `select status, count(*)::int as n from broadcast_recipients where broadcast_id = $1 group by status order by status`,
    [broadcastId],
  );
  expect(rows).toEqual([
    { status: 'sent', n: 490 },
    { status: 'skipped', n: 10 },
  ]);
  expect(await creditsOf(service, account.userId)).toBe(510);

  expect(await eventsOf(service, account.userId, 'Broadcast Started')).toEqual([
    expect.objectContaining({ data: { broadcast_id: broadcastId, list_id: listId, whatsapp_template_id: templateId, total: 500 } }),
  ]);
  expect(await eventsOf(service, account.userId, 'Broadcast Completed')).toEqual([
    expect.objectContaining({ data: { broadcast_id: broadcastId, total: 500, sent: 490, failed: 0, skipped: 10 } }),
  ]);
  expect(await eventsOf(service, account.userId, 'New Message')).toHaveLength(490);

  const listed = await service.request('GET', '/v1/broadcasts', { apiKey: account.apiKey, query: { limit: 10 } });
  expect(listed.status).toBe(200);
  expect(listed.body).toEqual({ success: true, broadcasts: [done], next_cursor: null });
}, 120_000);

test('when credits run out, that recipient fails with "not enough credits" and the broadcast stops early, failing the rest', async () => {
  const account = await connectedAccount(3);
  const listId = await createList(account.apiKey);
  for (let i = 0; i < 6; i++) await createContact(service, account.apiKey, { listId });
  const templateId = await addTemplate(service, account.userId, { name: 'hi', body: 'Hi' });
  const created = await service.request('POST', '/v1/broadcasts', { apiKey: account.apiKey, body: { listId, whatsappTemplateId: templateId } });
  expect(created.status, created.text).toBe(201);

  const done = await waitForCompletion(account.apiKey, created.body.data.id);
  expect(done).toMatchObject({ status: 'completed', total: 6, sent: 3, failed: 3, skipped: 0, error: 'stopped early: not enough credits' });
  expect(sendsFor(`bc-pn-${connections}`)).toHaveLength(3);
  const { rows } = await service.services.pool.query(`select distinct error from broadcast_recipients where broadcast_id = $1 and status = 'failed'`, [created.body.data.id]);
  expect(rows).toEqual([{ error: 'not enough credits' }]);
  expect(await creditsOf(service, account.userId)).toBe(0);
});

test('a provider refusal fails only that recipient', async () => {
  const account = await connectedAccount(100);
  const listId = await createList(account.apiKey);
  for (let i = 0; i < 4; i++) await createContact(service, account.apiKey, { listId });
  const templateId = await addTemplate(service, account.userId, { name: 'hi', body: 'Hi' });
  const phoneNumberId = `bc-pn-${connections}`;
  let seen = 0;
  fake.answerSendsWith((request) => {
    if (!request.path.includes(`/${phoneNumberId}/`)) return undefined;
    seen += 1;
    return seen === 2 ? { status: 400, body: { error: { message: 'Invalid parameter', code: 100 } } } : undefined;
  });
  try {
    const created = await service.request('POST', '/v1/broadcasts', { apiKey: account.apiKey, body: { listId, whatsappTemplateId: templateId } });
    expect(created.status, created.text).toBe(201);
    const done = await waitForCompletion(account.apiKey, created.body.data.id);
    // The broadcast says why a recipient failed, not `error: null`.
    expect(done).toMatchObject({
      status: 'completed',
      total: 4,
      sent: 3,
      failed: 1,
      skipped: 0,
      error: '1 recipient failed: The messaging provider refused the send (100): Invalid parameter',
    });
    expect(await creditsOf(service, account.userId)).toBe(97);
  } finally {
    fake.answerSendsWith(null);
  }
});

test('creating a broadcast: 400 missing field or unapproved template, 403 without credentials, 404 for another account\'s list or template', async () => {
  const account = await connectedAccount(100);
  const listId = await createList(account.apiKey);
  const approved = await addTemplate(service, account.userId, { name: 'ok', body: 'Hi' });
  const pending = await addTemplate(service, account.userId, { name: 'wait', body: 'Hi', status: 'PENDING' });
  const other = await service.createAccount();
  const theirList = await createList(other.apiKey);
  const theirTemplate = await addTemplate(service, other.userId, { name: 'theirs', body: 'Hi' });
  const post = (body: Record<string, unknown>, apiKey = account.apiKey) => service.request('POST', '/v1/broadcasts', { apiKey, body });

  expect((await post({ listId })).body).toEqual({ success: false, error_code: 400, error: 'whatsappTemplateId is required' });
  expect((await post({ whatsappTemplateId: approved })).status).toBe(400);
  const unapproved = await post({ listId, whatsappTemplateId: pending });
  expect(unapproved.status).toBe(400);
  expect(unapproved.body.error).toBe('Template "wait" is PENDING; only APPROVED templates can be sent');
  expect((await post({ listId: theirList, whatsappTemplateId: approved })).status).toBe(404);
  expect((await post({ listId, whatsappTemplateId: theirTemplate })).status).toBe(404);
  const theirOwnList = await createList(other.apiKey);
  const unconnected = await post({ listId: theirOwnList, whatsappTemplateId: theirTemplate }, other.apiKey);
  expect(unconnected.status).toBe(403);
  expect(unconnected.body).toMatchObject({ success: false, error_code: 403 });

  const { rows } = await service.services.pool.query('select count(*)::int as n from broadcasts where account_id in ($1, $2)', [account.userId, other.userId]);
  expect(rows[0].n).toBe(0);
  const missing = await service.request('GET', '/v1/broadcasts/bc_nope', { apiKey: account.apiKey });
  expect(missing.status).toBe(404);
  expect(missing.body).toEqual({ success: false, error_code: 404, error: 'Broadcast not found' });
});
