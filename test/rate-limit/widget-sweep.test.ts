// Ended rate-limit windows are swept by whichever counting path runs first in a process, the
// chat widget's public requests included (no API key is used here), and each sweep is counted
// in rate_window_sweeps_total.
import { fetch } from 'undici';
import { afterAll, beforeAll, expect, test, vi } from 'vitest';
import { insecureAgent, startTestService, type TestService } from '../helpers/service.ts';
import { insertWidget } from '../realtime/widget-fixtures.ts';

const TOKEN = 'widget-sweep-metrics-token';

let service: TestService;
beforeAll(async () => {
  service = await startTestService({ env: { METRICS_TOKEN: TOKEN } });
});
afterAll(async () => {
  await service?.stop();
});

async function sweepsDone(): Promise<number> {
  const response = await fetch(`${service.origin}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` }, dispatcher: insecureAgent });
  const text = await response.text();
  return Number(/^rate_window_sweeps_total\{outcome="done"\} (\d+)$/m.exec(text)?.[1] ?? 0);
}

test("a widget visitor's poll, the process's first counted request, sweeps the ended windows and counts the sweep", async () => {
  // Account and widget written directly: no request of this process has been counted yet.
  const { userId } = await service.createAccount();
  const widgetId = await insertWidget(service, userId);
  const stale = `widget-visitor:${widgetId}:stale`;
  await service.services.pool.query(`insert into rate_counters (bucket, window_start, count) values ($1, now() - interval '10 minutes', 5)`, [stale]);
  expect(await sweepsDone()).toBe(0);

  const poll = await service.request('GET', '/chat-widget-messages', { query: { fromId: 'visitor-sweep-1', toId: widgetId, userId } });
  expect(poll.status).toBe(404);
  // vitest's own 1 s default is too short for a loaded machine.
  const loaded = { timeout: 30_000, interval: 50 };
  await vi.waitFor(async () => {
    const { rows } = await service.services.pool.query('select 1 from rate_counters where bucket = $1', [stale]);
    expect(rows).toHaveLength(0);
  }, loaded);
  await vi.waitFor(async () => expect(await sweepsDone()).toBe(1), loaded);
});
