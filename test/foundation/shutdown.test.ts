// Graceful shutdown: stop accepting, finish the requests in flight, then stop
// the worker and the database connections.
import { expect, test } from 'vitest';
import { z } from 'zod';
import { fetch } from 'undici';
import { appRouter } from '../../routers/index.ts';
import { publicProcedure, router } from '../../server/trpc.ts';
import { insecureAgent, startTestService } from '../helpers/service.ts';

test('a request in flight when the service stops is completed', async () => {
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let entered!: () => void;
  const inside = new Promise<void>((resolve) => (entered = resolve));
  const slow = publicProcedure
    .meta({ openapi: { method: 'GET', path: '/test-slow', protect: false }, section: 'Analytics', access: 'read' })
    .input(z.object({}))
    .output(z.object({ done: z.boolean() }))
    .query(async () => {
      entered();
      await released;
      return { done: true };
    });
  const service = await startTestService({ definition: { router: router({ ...appRouter._def.record, testSlow: slow }) } });

  const inFlight = fetch(`${service.baseUrl}/test-slow`, { dispatcher: insecureAgent });
  await inside;
  let stopped = false;
  const stopping = service.stop().then(() => (stopped = true));
  // The stop waits for the request: it cannot finish while the procedure is still running.
  await new Promise((resolve) => setTimeout(resolve, 100));
  expect(stopped).toBe(false);
  release();
  const response = await inFlight;
  expect(response.status).toBe(200);
  expect(await response.json()).toEqual({ done: true });
  await stopping;
  expect(stopped).toBe(true);
  // No longer accepting.
  await expect(fetch(`${service.baseUrl}/health`, { dispatcher: insecureAgent })).rejects.toThrow();
});
