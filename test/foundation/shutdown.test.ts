// Graceful shutdown: stop accepting, finish the requests in flight, then stop
// the worker and the database connections.
import { expect, test } from 'vitest';
import { fetch } from 'undici';
import { routerWithSlowProcedure } from '../helpers/slow-procedure.ts';
import { insecureAgent, startTestService } from '../helpers/service.ts';

test('a request in flight when the service stops is completed', async () => {
  const { router: slowRouter, inside, release } = routerWithSlowProcedure();
  const service = await startTestService({ definition: { router: slowRouter } });

  const inFlight = fetch(`${service.baseUrl}/test-slow`, { dispatcher: insecureAgent });
  await inside;
  let stopped = false;
  const stopping = service.stop().then(() => (stopped = true));
  // The stop is under way (the service no longer takes requests: a new connection is
  // refused, one kept alive gets 503) yet waits for the request, whose procedure still runs.
  await expect
    .poll(
      () =>
        fetch(`${service.baseUrl}/health`, { dispatcher: insecureAgent }).then(
          async (response) => (await response.arrayBuffer(), response.status === 503),
          () => true,
        ),
      { timeout: 30_000, interval: 50 },
    )
    .toBe(true);
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
