// SIGTERM under a steady stream of requests and with a job running: every request whose
// answer started gets all of it (its 2xx, or the shutdown 503 in the envelope), the running
// job is handed back unlocked for another worker, and the process exits with code 0.
import type { ServerResponse } from 'node:http';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { fetch } from 'undici';
import { afterAll, beforeAll, expect, inject, test } from 'vitest';
import { insecureAgent, startTestService, type TestService } from '../helpers/service.ts';
import { createContact, record } from '../messages/conversation-fixtures.ts';
import { killHard, startChildService, stopChildService, waitFor, type ChildService } from './fixtures.ts';

const LOOPS = 20;

let service: TestService;
let child: ChildService | undefined;
let completions: { url: string; held: ServerResponse[]; close(): Promise<void> };

/** A chat-completions endpoint that never answers: the summary job runs until it is stopped. */
function startHeldCompletions(): Promise<typeof completions> {
  const held: ServerResponse[] = [];
  // HTTPS with the run's test CA, as summaries go through the outbound client (HTTPS only).
  const tls = inject('webhookReceiverTls');
  const server = createServer({ key: tls.key, cert: tls.cert }, (request, response) => {
    request.resume();
    request.on('end', () => held.push(response));
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({
        url: `https://localhost:${(server.address() as AddressInfo).port}/v1`,
        held,
        close: () => {
          server.closeAllConnections();
          return new Promise((done) => server.close(() => done()));
        },
      }),
    ),
  );
}

beforeAll(async () => {
  completions = await startHeldCompletions();
  service = await startTestService({ env: { ROLE: 'api' } });
});

afterAll(async () => {
  if (child) await killHard(child.child);
  await stopChildService(child);
  await service?.stop();
  await completions?.close();
});

type Outcome = { kind: 'answered'; status: number; body: any } | { kind: 'refused'; error: string } | { kind: 'broken'; status: number; error: string };

test('SIGTERM under load: started answers complete, the running job is unlocked, the exit code is 0', async () => {
  child = await startChildService(service.databaseUrl, { ROLE: 'all', SUMMARY_API_URL: completions.url, SUMMARY_API_KEY: 'k', WEBHOOK_ALLOW_HOSTS: 'localhost' });
  // One account per loop, so no loop meets the per-key rate limit.
  const keys = await Promise.all(Array.from({ length: LOOPS }, async () => (await service.createAccount()).apiKey));

  // A summary job that is running (its provider call held) when the signal arrives.
  const owner = await service.createAccount();
  const { contactId, phoneNumber } = await createContact(service, owner.apiKey);
  await record(service, owner.userId, contactId, 'inbound', 'Hello?');
  const requested = await service.request('POST', '/v1/summaries', { apiKey: owner.apiKey, body: { phoneNumber } });
  expect(requested.status).toBe(200);
  await waitFor(async () => (completions.held.length ? true : undefined), 'the summary job to be running');

  const outcomes: Outcome[] = [];
  let stop = false;
  const loop = async (apiKey: string, index: number) => {
    for (let i = 0; !stop; i++) {
      const write = i % 2 === 1;
      const url = `${child!.origin}/v1/${write ? 'tasks' : 'lists'}?apiKey=${apiKey}`;
      let response;
      try {
        response = await fetch(url, {
          method: write ? 'POST' : 'GET',
          headers: write ? { 'content-type': 'application/json' } : {},
          body: write ? JSON.stringify({ title: `loop ${index} #${i}` }) : undefined,
          dispatcher: insecureAgent,
          signal: AbortSignal.timeout(30_000),
        });
      } catch (error) {
        // No answer started: refused, or a kept-alive connection closed before it carried this request.
        outcomes.push({ kind: 'refused', error: String((error as Error).cause ?? error) });
        // Once the port is closed every attempt is refused; nothing more to learn.
        if (outcomes.filter((outcome) => outcome.kind === 'refused').length > LOOPS * 5) stop = true;
        continue;
      }
      try {
        const text = await response.text();
        outcomes.push({ kind: 'answered', status: response.status, body: JSON.parse(text) });
      } catch (error) {
        outcomes.push({ kind: 'broken', status: response.status, error: String(error) });
      }
    }
  };
  const loops = keys.map(loop);
  await waitFor(async () => (outcomes.length >= LOOPS * 4 ? true : undefined), 'the load to be under way');
  const beforeSignal = outcomes.length;
  child.child.kill('SIGTERM');
  const exitCode = await Promise.race([
    child.exited,
    new Promise<string>((resolve) => setTimeout(() => resolve('still running after 45 s'), 45_000).unref()),
  ]);
  stop = true;
  await Promise.all(loops);

  expect(exitCode).toBe(0);
  // Every answer that started is complete and is a success or the documented shutdown 503.
  expect(outcomes.filter((outcome) => outcome.kind === 'broken')).toEqual([]);
  const answered = outcomes.filter((outcome) => outcome.kind === 'answered');
  const unexpected = answered.filter(
    (outcome) =>
      !(outcome.status === 200 && outcome.body.success === true) &&
      !(outcome.status === 201 && outcome.body.success === true) &&
      !(outcome.status === 503 && outcome.body.success === false && typeof outcome.body.error === 'string' && outcome.body.error_code === 503),
  );
  expect(unexpected).toEqual([]);
  expect(answered.length).toBeGreaterThan(beforeSignal - 1);

  // The job the process was running is back in the queue, for any worker to take.
  const { rows } = await service.services.pool.query<{ locked_by: string | null; locked_at: string | null }>(
    `select locked_by, locked_at from graphile_worker._private_jobs j join graphile_worker._private_tasks t on t.id = j.task_id
      where t.identifier = 'generate-summary'`,
  );
  expect(rows).toHaveLength(1);
  expect(rows[0]).toEqual({ locked_by: null, locked_at: null });
});
