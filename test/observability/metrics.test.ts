// GET /metrics: served only with METRICS_TOKEN, only to its bearer, in the Prometheus
// text format, and its figures move with what the service does.
import { connect, type Socket } from 'node:net';
import { fetch } from 'undici';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { insertAttempts } from '../../server/webhooks/sql/record-attempts.ts';
import { insecureAgent, startTestService, type TestService } from '../helpers/service.ts';
import { inOneWindow } from '../rate-limit/fresh-window.ts';
import { subscribe } from '../webhooks/webhook-fixtures.ts';

const TOKEN = 'metrics-token-for-tests';
let service: TestService;

beforeAll(async () => {
  // ROLE=api: no worker takes the queued jobs, so the queue depth is what the test queued.
  service = await startTestService({ env: { METRICS_TOKEN: TOKEN, ROLE: 'api' } });
});
afterAll(async () => {
  await service?.stop();
});

type Sample = { name: string; labels: Record<string, string>; value: number };
type Family = { help: string; type: string; samples: Sample[] };

const NAME = '[a-zA-Z_:][a-zA-Z0-9_:]*';
const LABEL = `([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\\\\n]|\\\\[\\\\"n])*)"`;
const SAMPLE = new RegExp(`^(${NAME})(?:\\{((?:${LABEL})(?:,${LABEL})*)?,?\\})? (\\S+)(?: -?\\d+)?$`);
const TYPES = new Set(['counter', 'gauge', 'histogram', 'summary', 'untyped']);
const SUFFIXES = ['_bucket', '_sum', '_count', '_created', '_total'];

/** A strict reader of the text exposition format (0.0.4): throws on any line it does not understand. */
function parseExposition(text: string): Map<string, Family> {
  const families = new Map<string, Family>();
  const familyOf = (name: string) => {
    if (families.has(name)) return families.get(name)!;
    for (const suffix of SUFFIXES) {
      const base = name.endsWith(suffix) ? name.slice(0, -suffix.length) : null;
      if (base && families.has(base)) return families.get(base)!;
    }
    throw new Error(`sample ${name} has no # TYPE before it`);
  };
  expect(text.endsWith('\n')).toBe(true);
  for (const line of text.slice(0, -1).split('\n')) {
    if (line === '') continue;
    const meta = /^# (HELP|TYPE) (\S+) (.*)$/.exec(line);
    if (meta) {
      const [, kind, name, rest] = meta;
      if (!new RegExp(`^${NAME}$`).test(name)) throw new Error(`bad metric name: ${line}`);
      const family = families.get(name) ?? { help: '', type: '', samples: [] };
      if (kind === 'HELP') family.help = rest;
      else if (TYPES.has(rest)) family.type = rest;
      else throw new Error(`bad type: ${line}`);
      families.set(name, family);
      continue;
    }
    if (line.startsWith('#')) throw new Error(`unexpected comment: ${line}`);
    const match = SAMPLE.exec(line);
    if (!match) throw new Error(`not a sample line: ${line}`);
    const name = match[1];
    const labels: Record<string, string> = {};
    for (const [, key, value] of (match[2] ?? '').matchAll(new RegExp(LABEL, 'g'))) labels[key] = value.replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c));
    const raw = match[match.length - 1];
    // Values as Go's ParseFloat reads them (Prometheus's own parser): Inf and NaN in any case.
    const special = raw.toLowerCase();
    const value = special === '+inf' ? Infinity : special === '-inf' ? -Infinity : special === 'nan' ? NaN : Number(raw);
    if (Number.isNaN(value) && special !== 'nan') throw new Error(`bad value: ${line}`);
    familyOf(name).samples.push({ name, labels, value });
  }
  for (const [name, family] of families) if (!family.type) throw new Error(`${name} has no # TYPE`);
  return families;
}

async function scrape(authorization: string | null = `Bearer ${TOKEN}`) {
  const response = await fetch(`${service.origin}/metrics`, { headers: authorization === null ? {} : { authorization }, dispatcher: insecureAgent });
  return { status: response.status, contentType: response.headers.get('content-type') ?? '', text: await response.text() };
}

async function metrics(): Promise<Map<string, Family>> {
  const answer = await scrape();
  expect(answer.status).toBe(200);
  expect(answer.contentType).toMatch(/^text\/plain; version=0\.0\.4/);
  return parseExposition(answer.text);
}

/** The value of one series (0 when the series does not exist yet). */
function value(families: Map<string, Family>, name: string, labels: Record<string, string>): number {
  const found = [...families.values()]
    .flatMap((family) => family.samples)
    .filter((sample) => sample.name === name && Object.entries(labels).every(([key, wanted]) => sample.labels[key] === wanted));
  expect(found.length).toBeLessThanOrEqual(1);
  return found[0]?.value ?? 0;
}

describe('access', () => {
  test('404 when METRICS_TOKEN is not set', async () => {
    const plain = await startTestService();
    try {
      const response = await fetch(`${plain.origin}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` }, dispatcher: insecureAgent });
      expect(response.status).toBe(404);
    } finally {
      await plain.stop();
    }
  });

  test('401 without the token or with a wrong one', async () => {
    for (const authorization of [null, `Bearer wrong-${TOKEN}`, `Bearer ${TOKEN.slice(0, -1)}`, TOKEN, `Basic ${TOKEN}`]) {
      const answer = await scrape(authorization);
      expect(answer.status, `${authorization}: ${answer.text}`).toBe(401);
      expect(answer.text).not.toContain('http_requests_total');
    }
  });

  test('the text parses as the Prometheus exposition format and has every family', async () => {
    const families = await metrics();
    for (const name of [
      'http_requests_total',
      'http_request_duration_seconds',
      'rate_limit_refusals_total',
      'rate_window_sweeps_total',
      'job_queue_depth',
      'job_queue_oldest_due_age_seconds',
      'webhook_attempts_recent',
      'webhook_attempt_duration_seconds_recent',
      'db_pool_connections',
      'widget_sockets_connected',
      'process_cpu_user_seconds_total',
    ]) {
      expect(families.has(name), name).toBe(true);
      expect(families.get(name)!.help.length, name).toBeGreaterThan(0);
    }
    expect(families.get('http_request_duration_seconds')!.type).toBe('histogram');
    expect(value(families, 'db_pool_connections', { state: 'total' })).toBeGreaterThan(0);
  });

  test("open files are counted, and no figure walks every one of the process's handles", async () => {
    // A scrape that walked each socket's handle held the event loop about 100 ms at 10,000 chat-widget sockets.
    const before = await metrics();
    for (const name of ['nodejs_active_handles', 'nodejs_active_handles_total', 'nodejs_active_resources', 'nodejs_active_resources_total']) {
      expect(before.has(name), name).toBe(false);
    }
    const { hostname, port } = new URL(service.origin);
    const sockets = await Promise.all(
      Array.from({ length: 40 }, () => new Promise<Socket>((resolve, reject) => {
        const socket = connect(Number(port), hostname, () => resolve(socket));
        socket.once('error', reject);
      })),
    );
    try {
      const after = await metrics();
      expect(after.get('process_open_fds')!.type).toBe('gauge');
      expect(value(after, 'process_open_fds', {}) - value(before, 'process_open_fds', {})).toBeGreaterThanOrEqual(40);
    } finally {
      for (const socket of sockets) socket.destroy();
    }
  });

  test('the parser refuses what is not the format', () => {
    expect(() => parseExposition('# TYPE x counter\nx{a="1" 2\n')).toThrow();
    expect(() => parseExposition('y 1\n')).toThrow();
    expect(() => parseExposition('# TYPE x counter\nx one\n')).toThrow();
  });
});

describe('figures move', () => {
  test('requests are counted by route pattern and status, not by raw URL', async () => {
    const { apiKey } = await service.createAccount();
    const route = { method: 'GET', route: '/v1/tasks/{id}', status: '404' };
    const before = await metrics();
    const N = 12;
    for (let i = 0; i < N; i++) {
      expect((await service.request('GET', `/tasks/tsk_missing${i}`, { apiKey })).status).toBe(404);
    }
    const after = await metrics();
    expect(value(after, 'http_requests_total', route) - value(before, 'http_requests_total', route)).toBeGreaterThanOrEqual(N);
    expect(value(after, 'http_request_duration_seconds_count', route) - value(before, 'http_request_duration_seconds_count', route)).toBeGreaterThanOrEqual(N);
    expect(value(after, 'http_request_duration_seconds_bucket', { ...route, le: '+Inf' })).toBe(value(after, 'http_request_duration_seconds_count', route));
    const rawUrls = [...after.values()].flatMap((family) => family.samples).filter((sample) => sample.labels.route?.includes('tsk_missing'));
    expect(rawUrls).toEqual([]);
  });

  test('a 429 from the rate limiter counts as a refusal', async () => {
    await inOneWindow(service.services.pool, async () => {
      const { apiKey } = await service.createAccount();
      const created = await service.request('POST', '/api-keys', { apiKey, body: { scopes: { tags: ['Lists'], rate_limit_per_min: 1 } } });
      expect(created.status).toBe(201);
      const before = value(await metrics(), 'rate_limit_refusals_total', { limiter: 'api_key' });
      const statuses: number[] = [];
      for (let i = 0; i < 3; i++) statuses.push((await service.request('GET', '/lists', { apiKey: created.body.api_key })).status);
      expect(statuses).toEqual([200, 429, 429]);
      expect(value(await metrics(), 'rate_limit_refusals_total', { limiter: 'api_key' }) - before).toBe(2);
    });
  });

  test('the job queue depth reflects queued jobs', async () => {
    const { apiKey } = await service.createAccount();
    const depth = (families: Map<string, Family>) => value(families, 'job_queue_depth', { task: 'generate-summary', state: 'due' });
    const before = depth(await metrics());
    const K = 3;
    for (let i = 0; i < K; i++) {
      const phoneNumber = `+1415555${String(4000 + i).padStart(4, '0')}`;
      expect((await service.request('POST', '/contacts', { apiKey, body: { phoneNumber } })).status).toBe(200);
      expect((await service.request('POST', '/summaries', { apiKey, body: { phoneNumber } })).status).toBe(200);
    }
    const after = await metrics();
    expect(depth(after) - before).toBe(K);
    expect(value(after, 'job_queue_oldest_due_age_seconds', {})).toBeGreaterThanOrEqual(0);
  });

  test('webhook attempts of the last minutes are counted by outcome, as the one writer of attempts records them', async () => {
    const before = await metrics();
    // Attempts as a worker's sending round records them (this process runs none: ROLE=api).
    const { userId } = await service.createAccount({ webhooks: true });
    const subscriptionId = await subscribe(service, userId, { url: 'https://localhost/hook', events: ['Task Created'] });
    const attempt = (n: number, statusCode: number, durationMs: number) => ({
      id: `att_metrics_${n}`, deliveryId: 'dlv_metrics', eventId: 'evt_metrics', accountId: userId, subscriptionId,
      attempt: n, statusCode, durationMs, error: statusCode === 500 ? 'HTTP 500' : null,
    });
    const client = await service.services.pool.connect();
    try {
      await insertAttempts(client, [attempt(1, 200, 100), attempt(2, 204, 300), attempt(3, 500, 2000)]);
    } finally {
      client.release();
    }
    const after = await metrics();
    expect(value(after, 'webhook_attempts_recent', { outcome: 'delivered' }) - value(before, 'webhook_attempts_recent', { outcome: 'delivered' })).toBe(2);
    expect(value(after, 'webhook_attempts_recent', { outcome: 'failed' }) - value(before, 'webhook_attempts_recent', { outcome: 'failed' })).toBe(1);
    // The median's rank, 1.5 of 3, is half-way into the bucket of 300 ms (250–500 ms).
    expect(value(after, 'webhook_attempt_duration_seconds_recent', { quantile: '0.5' })).toBeCloseTo(0.375, 9);
    expect(value(after, 'webhook_attempt_duration_seconds_recent', { quantile: '0.99' })).toBeGreaterThan(1);
  });
});
