// A worker process killed (SIGKILL) while it generates a summary: the job is not lost with
// it, nor held for hours by the dead worker's lock. Another worker takes it up and stores the
// summary exactly once.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, inject, test } from 'vitest';
import { completion } from '../helpers/fake-chat-completions.ts';
import { startTestService, type TestService } from '../helpers/service.ts';
import { workerProcesses } from '../helpers/worker-process.ts';
import { createContact, eventsOf, record } from '../messages/conversation-fixtures.ts';
import { killHard, waitFor } from './fixtures.ts';

/** A chat-completions endpoint that holds its first request unanswered, then answers at once. */
function startSlowCompletions() {
  const received: IncomingMessage[] = [];
  const held: ServerResponse[] = [];
  // HTTPS with the run's test CA, as summaries go through the outbound client (HTTPS only).
  const tls = inject('webhookReceiverTls');
  const server = createServer({ key: tls.key, cert: tls.cert }, (request, response) => {
    request.resume();
    request.on('end', () => {
      received.push(request);
      if (received.length === 1) return void held.push(response);
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify(completion('Summarised after the crash.')));
    });
  });
  return new Promise<{ url: string; received: IncomingMessage[]; close(): Promise<void> }>((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({
        url: `https://localhost:${(server.address() as AddressInfo).port}/v1`,
        received,
        close: () => {
          server.closeAllConnections();
          return new Promise((done) => server.close(() => done()));
        },
      }),
    ),
  );
}

let service: TestService;
let completions: Awaited<ReturnType<typeof startSlowCompletions>>;
const workers = workerProcesses(() => service.databaseUrl, {});

beforeAll(async () => {
  completions = await startSlowCompletions();
  // The API only: the job is run by the worker processes this test starts and kills.
  service = await startTestService({ env: { ROLE: 'api', SUMMARY_API_URL: completions.url, SUMMARY_API_KEY: 'k', WEBHOOK_ALLOW_HOSTS: 'localhost' } });
});

afterAll(async () => {
  await workers.stopAll();
  await service?.stop();
  await completions?.close();
});

test('a worker killed mid-summary leaves the job to another worker, which stores exactly one summary', async () => {
  const { userId, apiKey } = await service.createAccount();
  const { contactId, phoneNumber } = await createContact(service, apiKey);
  await record(service, userId, contactId, 'inbound', 'Where is my parcel?');
  await record(service, userId, contactId, 'outbound', 'It ships tomorrow.');
  const requested = await service.request('POST', '/v1/summaries', { apiKey, body: { phoneNumber } });
  expect(requested.body).toEqual({ success: true, message: 'Summary generation initiated' });

  const env = { SUMMARY_API_URL: completions.url, SUMMARY_API_KEY: 'k', WEBHOOK_ALLOW_HOSTS: 'localhost' };
  const first = await workers.start(env);
  await waitFor(async () => (completions.received.length >= 1 ? true : undefined), 'the first worker to ask for the summary');
  const job = async () =>
    (
      await service.services.pool.query<{ id: string; locked_by: string | null; attempts: number }>(
        `select id, locked_by, attempts from graphile_worker.jobs where task_identifier = 'generate-summary'`,
      )
    ).rows;
  const [running] = await job();
  expect(running?.locked_by).toEqual(expect.any(String));
  await killHard(first);
  // Still locked by the dead worker: nothing but another worker can hand it on.
  expect((await job())[0]?.locked_by).toBe(running!.locked_by);

  await workers.start(env);
  const summaries = await waitFor(async () => {
    const listed = await service.request('GET', `/v1/contacts/${contactId}/summaries`, { apiKey });
    return listed.body?.data?.length ? listed.body.data : undefined;
  }, 'the summary from the second worker');
  expect(summaries).toEqual([expect.objectContaining({ summary: 'Summarised after the crash.', message_count: 2 })]);
  await waitFor(async () => ((await job()).length === 0 ? true : undefined), 'the job to be done');
  const { rows } = await service.services.pool.query(`select id from summaries where contact_id = $1`, [contactId]);
  expect(rows).toHaveLength(1);
  expect(await eventsOf(service, userId, 'Chat Concluded')).toHaveLength(1);
  expect(completions.received).toHaveLength(2);
});
