// A failure that is not a domain error (a database or driver error, a bug) answers
// "Internal server error" on /trpc as on /v1: its own message, which may name tables,
// constraints or values, never reaches the client. Input errors keep their messages.
import { fetch as undiciFetch } from 'undici';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { z } from 'zod';
import { appRouter } from '../../routers/index.ts';
import { publicProcedure, router } from '../../server/trpc.ts';
import { insecureAgent, startTestService, type TestService } from '../helpers/service.ts';

const DRIVER_MESSAGE = 'duplicate key value violates unique constraint "contacts_secret_idx"';

const failing = publicProcedure
  .meta({ openapi: { method: 'GET', path: '/test-failing', protect: false }, section: 'Analytics', access: 'read' })
  .input(z.object({ n: z.coerce.number().optional() }))
  .output(z.object({ done: z.boolean() }))
  .query(() => {
    throw new Error(DRIVER_MESSAGE);
  });

let service: TestService;

beforeAll(async () => {
  service = await startTestService({ definition: { router: router({ ...appRouter._def.record, testFailing: failing }) } });
});
afterAll(async () => {
  await service?.stop();
});

async function trpcGet(query: string) {
  const response = await undiciFetch(`${service.origin}/trpc/testFailing${query}`, { dispatcher: insecureAgent });
  return { status: response.status, text: await response.text() };
}

test('/trpc answers a plain error as "Internal server error", as a single call and in a batch', async () => {
  const single = await trpcGet(`?input=${encodeURIComponent('{}')}`);
  expect(single.status).toBe(500);
  expect(JSON.parse(single.text).error).toMatchObject({ message: 'Internal server error', data: { code: 'INTERNAL_SERVER_ERROR', httpStatus: 500 } });
  expect(single.text).not.toContain('contacts_secret_idx');

  const batch = await trpcGet(`?batch=1&input=${encodeURIComponent('{"0":{}}')}`);
  expect(batch.status).toBe(500);
  expect(JSON.parse(batch.text)[0].error).toMatchObject({ message: 'Internal server error', data: { code: 'INTERNAL_SERVER_ERROR' } });
  expect(batch.text).not.toContain('contacts_secret_idx');
});

test('/v1 says the same of the same failure', async () => {
  const response = await service.request('GET', '/test-failing', { unchecked: true });
  expect(response.status).toBe(500);
  expect(response.body).toEqual({ success: false, error: 'Internal server error', error_code: 500 });
});

test('input errors keep their messages on /trpc (400 BAD_REQUEST)', async () => {
  const refused = await trpcGet(`?input=${encodeURIComponent('{"n":"many"}')}`);
  expect(refused.status).toBe(400);
  expect(JSON.parse(refused.text).error).toMatchObject({ message: expect.stringMatching(/^n: /), data: { code: 'BAD_REQUEST' } });
  const notJson = await trpcGet('?input=%7B');
  expect(notJson.status).toBe(400);
  expect(JSON.parse(notJson.text).error.message).not.toBe('Internal server error');
});
