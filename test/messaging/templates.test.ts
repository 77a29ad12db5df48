// Templates: the sync from the provider's paged listing (upsert by name and language,
// nothing the provider still lists removed), on demand and daily; GET /whatsapp-templates
// with the spec's list-item fields, for the authenticated user only.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { syncTemplates } from '../../server/messaging/sync-templates.ts';
import { SYNC_TEMPLATES_TASK, syncTemplatesCrontab, syncTemplatesTask } from '../../workers/sync-templates.ts';
import { startFakeMessagingProvider, type FakeMessagingProvider } from '../helpers/fake-messaging-provider.ts';
import { startTestService, type TestService } from '../helpers/service.ts';
import { eventually } from '../webhooks/webhook-fixtures.ts';

let service: TestService;
let fake: FakeMessagingProvider;
const logLines: string[] = [];

beforeAll(async () => {
  fake = await startFakeMessagingProvider();
  service = await startTestService({ env: { MESSAGING_API_URL: fake.url, WEBHOOK_ALLOW_HOSTS: 'localhost,127.0.0.1' }, logLines });
});

afterAll(async () => {
  await service?.stop();
  await fake?.close();
});

let numbers = 0;
/** An account connected to the fake provider under its own business account. */
async function connectedAccount(templates: Array<Record<string, unknown>> = []) {
  const account = await service.createAccount();
  numbers += 1;
  const businessAccountId = `8${process.pid}${numbers}`;
  const phoneNumberId = `9${process.pid}${numbers}`;
  fake.grant(`token-${numbers}`, { phoneNumberId, businessAccountId });
  fake.setTemplates(businessAccountId, templates);
  const put = await service.request('PUT', '/messaging/connection', {
    apiKey: account.apiKey,
    body: { phone_number_id: phoneNumberId, business_account_id: businessAccountId, access_token: `token-${numbers}` },
  });
  expect(put.status).toBe(200);
  return { ...account, businessAccountId };
}

function providerTemplate(name: string, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    id: `pt_${name}`,
    name,
    language: 'en_US',
    status: 'APPROVED',
    category: 'MARKETING',
    components: [
      { type: 'HEADER', format: 'TEXT', text: 'News' },
      { type: 'BODY', text: `Hello {{first_name|there}}, ${name}` },
    ],
    ...overrides,
  };
}

async function templatesOf(apiKey: string) {
  const response = await service.request('GET', '/whatsapp-templates', { apiKey });
  expect(response.status).toBe(200);
  return response.body.data as Array<Record<string, any>>;
}

async function storedRows(accountId: string) {
  const result = await service.services.pool.query<{ name: string; language: string; status: string; body: string; provider_template_id: string | null }>(
    'select name, language, status, body, provider_template_id from message_templates where account_id = $1 order by name, language',
    [accountId],
  );
  return result.rows;
}

const deps = () => ({ messaging: service.services.messaging, secrets: service.services.secrets, log: service.services.log });

describe('template sync', () => {
  test('every template of the listing is stored, across the provider pages, with its status, components and body text', async () => {
    const listed = [
      providerTemplate('alpha'),
      providerTemplate('beta', { status: 'PENDING' }),
      providerTemplate('gamma', { status: 'REJECTED', category: 'UTILITY' }),
      providerTemplate('delta', { language: 'de' }),
      providerTemplate('epsilon', { components: [{ type: 'BODY', text: 'Broken {{first_name|a|b|c}}' }] }),
    ];
    const { userId, apiKey, businessAccountId } = await connectedAccount(listed);
    // The connect queued the sync; the worker runs it.
    const templates = await eventually(() => templatesOf(apiKey), (list) => list.length === 5);
    expect(templates.map((template) => `${template.name}/${template.language}/${template.status}`).sort()).toEqual([
      'alpha/en_US/APPROVED',
      'beta/en_US/PENDING',
      'delta/de/APPROVED',
      'epsilon/en_US/APPROVED',
      'gamma/en_US/REJECTED',
    ]);
    expect(fake.requests.filter((request) => request.path.startsWith(`/v21.0/${businessAccountId}/message_templates`))).toHaveLength(3);
    const gamma = templates.find((template) => template.name === 'gamma')!;
    expect(gamma).toEqual({
      id: expect.stringMatching(/^tpl_/),
      name: 'gamma',
      status: 'REJECTED',
      language: 'en_US',
      category: 'UTILITY',
      components: listed[2]!.components,
      createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      template: listed[2],
    });
    const rows = await storedRows(userId);
    expect(rows.find((row) => row.name === 'alpha')).toMatchObject({ body: 'Hello {{first_name|there}}, alpha', provider_template_id: 'pt_alpha' });
    // An invalid body is stored all the same; sends refuse it later.
    expect(rows.find((row) => row.name === 'epsilon')!.body).toBe('Broken {{first_name|a|b|c}}');
  });

  test('a later sync updates by name and language, keeps ids, and marks templates the provider no longer lists', async () => {
    const { userId, apiKey, businessAccountId } = await connectedAccount([providerTemplate('one'), providerTemplate('two'), providerTemplate('three')]);
    const first = await eventually(() => templatesOf(apiKey), (list) => list.length === 3);
    fake.setTemplates(businessAccountId, [providerTemplate('one', { status: 'PAUSED' }), providerTemplate('two'), providerTemplate('four')]);
    const outcome = await syncTemplates(service.services.orm.em.fork(), deps(), userId);
    expect(outcome).toEqual({ listed: 3, created: 1, updated: 2, noLongerListed: 1 });
    const after = await templatesOf(apiKey);
    const byName = new Map(after.map((template) => [template.name, template]));
    expect(after).toHaveLength(4);
    expect(byName.get('one')).toMatchObject({ status: 'PAUSED', id: first.find((template) => template.name === 'one')!.id });
    expect(byName.get('two')!.status).toBe('APPROVED');
    expect(byName.get('three')!.status).toBe('DELETED');
    expect(byName.get('four')!.status).toBe('APPROVED');
  });

  test('POST /whatsapp-templates/sync queues a sync (202) that the worker runs', async () => {
    const { apiKey, businessAccountId } = await connectedAccount([providerTemplate('first')]);
    await eventually(() => templatesOf(apiKey), (list) => list.length === 1);
    fake.setTemplates(businessAccountId, [providerTemplate('first'), providerTemplate('second')]);
    const queued = await service.request('POST', '/whatsapp-templates/sync', { apiKey });
    expect(queued.status).toBe(202);
    expect(queued.body).toEqual({ success: true, queued: true });
    const templates = await eventually(() => templatesOf(apiKey), (list) => list.length === 2);
    expect(templates.map((template) => template.name).sort()).toEqual(['first', 'second']);
  });

  test('a provider outage fails the sync job as a warning without a stack, and the job is retried', async () => {
    const { apiKey, businessAccountId } = await connectedAccount([providerTemplate('before_outage')]);
    await eventually(() => templatesOf(apiKey), (list) => list.length === 1);
    fake.setTemplates(businessAccountId, [providerTemplate('before_outage'), providerTemplate('after_outage')]);
    fake.answerRequestsWith((request) => (request.path.includes(`/${businessAccountId}/`) ? { status: 503, body: 'upstream unavailable' } : undefined));
    let failures: Array<Record<string, any>>;
    try {
      expect((await service.request('POST', '/whatsapp-templates/sync', { apiKey })).status).toBe(202);
      failures = await eventually(
        async () => logLines.map((line) => JSON.parse(line)).filter((line) => line.msg === 'job failed: an outside service failed' && line.task === SYNC_TEMPLATES_TASK),
        (lines) => lines.length > 0,
      );
    } finally {
      fake.answerRequestsWith(null);
    }
    expect(failures[0]).toMatchObject({ level: 40, attempt: 1, failure: 'The messaging provider refused the template listing with HTTP 503' });
    expect(JSON.stringify(failures)).not.toContain('"stack"');
    expect(logLines.filter((line) => JSON.parse(line).level >= 50)).toEqual([]);
    // Graphile Worker's backoff runs it again, and the provider answers this time.
    await eventually(() => templatesOf(apiKey), (list) => list.length === 2, 30_000);
  });

  test('POST /whatsapp-templates/sync without a connection is a 403 envelope', async () => {
    const { apiKey } = await service.createAccount();
    const refused = await service.request('POST', '/whatsapp-templates/sync', { apiKey });
    expect(refused.status).toBe(403);
    expect(refused.body).toEqual({ success: false, error_code: 403, error: 'Connect a messaging provider account before sending templates' });
  });

  test('the daily run queues one sync per connected account', async () => {
    expect(syncTemplatesCrontab).toMatch(new RegExp(`^\\S+ \\S+ \\* \\* \\* ${SYNC_TEMPLATES_TASK}\\b`));
    const one = await connectedAccount([providerTemplate('daily_one')]);
    const two = await connectedAccount([providerTemplate('daily_two')]);
    await eventually(() => templatesOf(two.apiKey), (list) => list.length === 1);
    await eventually(() => templatesOf(one.apiKey), (list) => list.length === 1);
    fake.setTemplates(one.businessAccountId, [providerTemplate('daily_one'), providerTemplate('daily_one_b')]);
    fake.setTemplates(two.businessAccountId, [providerTemplate('daily_two'), providerTemplate('daily_two_b')]);
    // What the crontab line runs: the task without an account.
    await syncTemplatesTask(service.services)({ _cron: { ts: new Date().toISOString(), backfilled: false } }, {} as never);
    await eventually(() => templatesOf(one.apiKey), (list) => list.length === 2);
    await eventually(() => templatesOf(two.apiKey), (list) => list.length === 2);
  });

  test('a refused listing (a revoked token) changes nothing and is not retried', async () => {
    const { userId, apiKey } = await connectedAccount([providerTemplate('kept')]);
    await eventually(() => templatesOf(apiKey), (list) => list.length === 1);
    await service.services.pool.query(`update messaging_connections set access_token_sealed = $2 where account_id = $1`, [
      userId,
      service.services.secrets.seal('revoked-token'),
    ]);
    const outcome = await syncTemplates(service.services.orm.em.fork(), deps(), userId);
    expect(outcome).toEqual({ skipped: 'The messaging provider refused the template listing (190): Invalid OAuth access token - Cannot parse access token' });
    expect((await templatesOf(apiKey)).map((template) => template.status)).toEqual(['APPROVED']);
  });
});

describe('GET /whatsapp-templates', () => {
  test('an account without templates gets an empty list', async () => {
    const { apiKey } = await service.createAccount();
    const response = await service.request('GET', '/whatsapp-templates', { apiKey });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ success: true, data: [] });
  });

  test('another account can neither see nor sync your templates', async () => {
    const owner = await connectedAccount([providerTemplate('private_one')]);
    await eventually(() => templatesOf(owner.apiKey), (list) => list.length === 1);
    const other = await service.createAccount();
    expect(await templatesOf(other.apiKey)).toEqual([]);
    const sync = await service.request('POST', '/whatsapp-templates/sync', { apiKey: other.apiKey });
    expect(sync.status).toBe(403);
    expect(await storedRows(other.userId)).toEqual([]);
  });
});
