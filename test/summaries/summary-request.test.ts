// POST /summaries over real HTTPS. This service runs without a worker (ROLE=api),
// so the queued generate-summary job stays in the queue where the test can read it.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startTestService, type TestService } from '../helpers/service.ts';
import { createContact, record } from '../messages/conversation-fixtures.ts';

let service: TestService;
beforeAll(async () => {
  service = await startTestService({ env: { ROLE: 'api' } });
});
afterAll(async () => {
  await service?.stop();
});

const TEXT_TYPE = 'text/plain; charset=utf-8';

type QueuedJob = { task: string; payload: { accountId: string; contactId: string }; max_attempts: number };

async function queuedJobs(accountId: string): Promise<QueuedJob[]> {
  const { rows } = await service.services.pool.query<QueuedJob>(
    `select tasks.identifier as task, jobs.payload, jobs.max_attempts
       from graphile_worker._private_jobs as jobs
       join graphile_worker._private_tasks as tasks on tasks.id = jobs.task_id
      where jobs.payload->>'accountId' = $1
      order by jobs.id`,
    [accountId],
  );
  return rows;
}

describe('POST /summaries', () => {
  test('200 {success, message} at once; a generate-summary job for the contact is queued with the request', async () => {
    const { userId, apiKey } = await service.createAccount();
    const { contactId, phoneNumber } = await createContact(service, apiKey);
    await record(service, userId, contactId, 'inbound', 'Hello');
    const response = await service.request('POST', '/summaries', { apiKey, body: { phoneNumber } });
    expect(response.status).toBe(200);
    expect(response.contentType).toBe('application/json; charset=utf-8');
    expect(response.body).toEqual({ success: true, message: 'Summary generation initiated' });
    // The job carries the request's id (X-Request-Id), for its log lines and events.
    expect(await queuedJobs(userId)).toEqual([{ task: 'generate-summary', payload: { accountId: userId, contactId, requestId: response.headers.get('x-request-id') }, max_attempts: 5 }]);
  });

  test('the contact may be named by email in the body, or by phoneNumber in the query string', async () => {
    const { userId, apiKey } = await service.createAccount();
    const byEmail = await createContact(service, apiKey, { email: 'grace@example.com' });
    const byQuery = await createContact(service, apiKey);
    const email = await service.request('POST', '/summaries', { apiKey, body: { email: 'grace@example.com' } });
    expect(email.status).toBe(200);
    expect(email.body).toEqual({ success: true, message: 'Summary generation initiated' });
    const query = await service.request('POST', '/summaries', { apiKey, query: { phoneNumber: byQuery.phoneNumber } });
    expect(query.status).toBe(200);
    expect((await queuedJobs(userId)).map((job) => job.payload.contactId)).toEqual([byEmail.contactId, byQuery.contactId]);
  });

  test('asking again before the summary was generated keeps one pending job for the contact', async () => {
    const { userId, apiKey } = await service.createAccount();
    const { phoneNumber } = await createContact(service, apiKey);
    for (let i = 0; i < 3; i++) expect((await service.request('POST', '/summaries', { apiKey, body: { phoneNumber } })).status).toBe(200);
    expect(await queuedJobs(userId)).toHaveLength(1);
  });

  test('400 plain string when neither or both of phoneNumber and email are sent, or one is invalid; nothing is queued', async () => {
    const { userId, apiKey } = await service.createAccount();
    const { phoneNumber } = await createContact(service, apiKey, { email: 'both@example.com' });
    const cases: [unknown, string][] = [
      [{}, 'Missing required parameters: phoneNumber or email'],
      [{ phoneNumber: ' ', email: '' }, 'Missing required parameters: phoneNumber or email'],
      [{ phoneNumber, email: 'both@example.com' }, 'Send exactly one of phoneNumber or email, not both'],
      [{ email: 'not-an-address' }, 'email must be a valid e-mail address'],
      [{ phoneNumber: '+12' }, 'Invalid phone number: it must be a valid number with its country code, such as +14155552671'],
    ];
    for (const [body, message] of cases) {
      const response = await service.request('POST', '/summaries', { apiKey, body });
      expect(response.status).toBe(400);
      expect(response.contentType).toBe(TEXT_TYPE);
      expect(response.text).toBe(message);
    }
    expect(await queuedJobs(userId)).toEqual([]);
  });

  test('401 plain string without a valid API key', async () => {
    const { apiKey } = await service.createAccount();
    const { phoneNumber } = await createContact(service, apiKey);
    for (const key of [undefined, 'wrong']) {
      const response = await service.request('POST', '/summaries', { apiKey: key, body: { phoneNumber } });
      expect(response.status).toBe(401);
      expect(response.contentType).toBe(TEXT_TYPE);
      expect(response.text).toBe('Invalid API key');
    }
  });

  test("404 plain string for an unknown contact and for another account's contact; nothing is queued", async () => {
    const a = await service.createAccount();
    const b = await service.createAccount();
    const { phoneNumber } = await createContact(service, a.apiKey, { email: 'only-a@example.com' });
    const cases: [string, unknown][] = [
      [a.apiKey, { phoneNumber: '+14155550100' }],
      [b.apiKey, { phoneNumber }],
      [b.apiKey, { email: 'only-a@example.com' }],
    ];
    for (const [apiKey, body] of cases) {
      const response = await service.request('POST', '/summaries', { apiKey, body });
      expect(response.status).toBe(404);
      expect(response.contentType).toBe(TEXT_TYPE);
      expect(response.text).toBe('Contact not found');
    }
    expect(await queuedJobs(a.userId)).toEqual([]);
    expect(await queuedJobs(b.userId)).toEqual([]);
  });

  test('500 {error} when the job cannot be queued', async () => {
    const { userId, apiKey } = await service.createAccount();
    const { phoneNumber } = await createContact(service, apiKey);
    // This test file's own database: queuing fails while the function is renamed.
    await service.services.pool.query('alter function graphile_worker.add_job rename to add_job_unavailable');
    try {
      const response = await service.request('POST', '/summaries', { apiKey, body: { phoneNumber } });
      expect(response.status).toBe(500);
      expect(response.contentType).toBe('application/json; charset=utf-8');
      expect(response.body).toEqual({ error: 'Internal server error' });
    } finally {
      await service.services.pool.query('alter function graphile_worker.add_job_unavailable rename to add_job');
    }
    expect(await queuedJobs(userId)).toEqual([]);
  });
});
