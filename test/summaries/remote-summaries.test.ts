// Summaries from an OpenAI-compatible chat-completions endpoint (a local fake):
// a 5xx is retried by the job, a 4xx fails for good and stores nothing.
import { afterAll, beforeAll, expect, test } from 'vitest';
import { completion, startFakeChatCompletions, type FakeChatCompletions } from '../helpers/fake-chat-completions.ts';
import { startTestService, type TestService } from '../helpers/service.ts';
import { createContact, eventsOf, eventually, record } from '../messages/conversation-fixtures.ts';

let service: TestService;
let fake: FakeChatCompletions;
beforeAll(async () => {
  fake = await startFakeChatCompletions();
  service = await startTestService({ env: { ...fake.env, SUMMARY_API_KEY: 'k' } });
});
afterAll(async () => {
  await service?.stop();
  await fake?.stop();
});

async function pendingSummaryJobs(): Promise<number> {
  const { rows } = await service.services.pool.query<{ count: string }>(
    `select count(*) as count from graphile_worker.jobs where task_identifier = 'generate-summary'`,
  );
  return Number(rows[0].count);
}

test('with SUMMARY_API_URL the summary comes from POST {url}/chat/completions; a 5xx answer is retried by the job', async () => {
  const { userId, apiKey } = await service.createAccount();
  const { contactId, phoneNumber } = await createContact(service, apiKey);
  await record(service, userId, contactId, 'inbound', 'Can I get a refund?');
  await record(service, userId, contactId, 'outbound', 'Yes, within 30 days.', { sender: 'Grace' });
  fake.requests.length = 0;
  fake.script({ status: 500 }, { status: 200, body: completion('  The contact asked for a refund; Grace confirmed the 30-day policy.  ') });

  const requested = await service.request('POST', '/summaries', { apiKey, body: { phoneNumber } });
  expect(requested.body).toEqual({ success: true, message: 'Summary generation initiated' });

  const listed = await eventually(async () => {
    const response = await service.request('GET', `/contacts/${contactId}/summaries`, { apiKey });
    return response.body.data.length ? response.body : undefined;
  }, 'the summary after one retry');
  expect(listed).toEqual({
    success: true,
    data: [{ id: expect.any(String), summary: 'The contact asked for a refund; Grace confirmed the 30-day policy.', created_at: expect.any(String), message_count: 2 }],
  });

  expect(fake.requests).toHaveLength(2);
  for (const request of fake.requests) {
    expect(request.method).toBe('POST');
    expect(request.path).toBe('/v1/chat/completions');
    expect(request.headers.authorization).toBe('Bearer k');
    expect(request.headers['content-type']).toBe('application/json');
    expect(request.body.model).toBe('gpt-4o-mini');
    expect(request.body.messages[0].role).toBe('system');
    expect(request.body.messages[1].role).toBe('user');
    expect(request.body.messages[1].content).toMatch(
      /^\[[^\]]+\] Inbound \(contact\): Can I get a refund\?\n\[[^\]]+\] Outbound \(Grace\): Yes, within 30 days\.$/,
    );
  }
  const concluded = await eventsOf(service, userId, 'Chat Concluded');
  expect(concluded.map((event) => event.payload.data.summary)).toEqual(listed.data);
});

test('a 4xx answer fails for good: no retry, no summary, no event', async () => {
  const { userId, apiKey } = await service.createAccount();
  const { contactId, phoneNumber } = await createContact(service, apiKey);
  await record(service, userId, contactId, 'inbound', 'Summarize me');
  fake.requests.length = 0;
  fake.script({ status: 400, body: { error: { message: 'context length exceeded' } } });

  await service.request('POST', '/summaries', { apiKey, body: { phoneNumber } });
  // The job leaves the queue only once it finished; a retried job would stay with a later run_at.
  await eventually(async () => (fake.requests.length === 1 && (await pendingSummaryJobs()) === 0 ? true : undefined), 'the job to finish');

  expect(fake.requests).toHaveLength(1);
  const listed = await service.request('GET', `/contacts/${contactId}/summaries`, { apiKey });
  expect(listed.body).toEqual({ success: true, data: [] });
  expect(await eventsOf(service, userId, 'Chat Concluded')).toEqual([]);
});
