// A router with one extra public procedure, GET /v1/test-slow, that holds its
// request until the test releases it: for tests of what happens to requests in
// flight when the service stops.
import { z } from 'zod';
import { appRouter } from '../../routers/index.ts';
import { publicProcedure, router } from '../../server/trpc.ts';

export function routerWithSlowProcedure() {
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
  return {
    router: router({ ...appRouter._def.record, testSlow: slow }),
    /** Resolves once the procedure is running. */
    inside,
    /** Lets the procedure answer. */
    release: () => release(),
  };
}
