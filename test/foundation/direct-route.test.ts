// GETs of the REST surface are answered from Node's request event without fastify (the direct
// route, server/http/rest.ts); a browser's cross-origin GET (with an Origin header) still goes
// through fastify. Either way the answer is the same: status, body and headers, the request
// id, the access log line and the metrics.
import { fetch } from 'undici';
import { expect, test } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { serviceForFile, type TestAccount } from '../helpers/service-for-file.ts';
import { insecureAgent, type TestService } from '../helpers/service.ts';

let service: TestService;
let account: TestAccount;
/** Paths of the requests fastify's hooks saw. */
const seenByFastify: string[] = [];
const logLines: string[] = [];
const METRICS_TOKEN = 'direct-route-metrics-token';

serviceForFile(
  {
    start: {
      logLines,
      env: { METRICS_TOKEN },
      definition: {
        plugins: [
          (host: FastifyInstance) => {
            host.addHook('onRequest', (request, _reply, done) => {
              seenByFastify.push(request.url.split('?')[0]!);
              done();
            });
            // A plain route on a path an operation's pattern also matches (GET /lists/{listId}).
            host.get('/v1/lists/plain-route', async (_request, reply) => reply.type('text/plain').send('plain route'));
          },
        ],
      },
    },
    accounts: [{}],
  },
  (started) => ({ service, accounts: [account] } = started),
);

async function scrape(): Promise<string> {
  const response = await fetch(`${service.origin}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` }, dispatcher: insecureAgent });
  expect(response.status).toBe(200);
  return response.text();
}

const ORIGIN = { origin: 'https://shop.example' };
/** Headers whose values differ from one answer to the next. */
const PER_ANSWER = new Set(['date', 'x-request-id', 'ratelimit']);

function headerMap(headers: Headers): Map<string, string> {
  return new Map([...headers].filter(([name]) => !PER_ANSWER.has(name)));
}

test('a GET answers the same directly and through fastify: results, failures, headers', async () => {
  const created = await service.request('POST', '/contacts', { apiKey: account.apiKey, body: { phoneNumber: '+14155550123' } });
  expect(created.status).toBe(200);
  const cases: [string, { apiKey?: string; query?: Record<string, string> }, number][] = [
    ['/contacts', { apiKey: account.apiKey, query: { phoneNumber: '+14155550123' } }, 200],
    ['/contacts', { apiKey: account.apiKey, query: { phoneNumber: '+14155550999' } }, 404],
    ['/contacts', { apiKey: account.apiKey, query: { phoneNumber: '+14155550123', colour: 'red' } }, 400],
    ['/contacts', { query: { phoneNumber: '+14155550123' } }, 401],
    ['/lists', { apiKey: account.apiKey }, 200],
  ];
  for (const [path, options, status] of cases) {
    const before = seenByFastify.length;
    const direct = await service.request('GET', path, options);
    expect(seenByFastify.length, `GET ${path} answered directly`).toBe(before);
    const viaFastify = await service.request('GET', path, { ...options, headers: ORIGIN });
    expect(seenByFastify.slice(before), `GET ${path} with an Origin through fastify`).toEqual([`/v1${path}`]);
    expect([direct.status, viaFastify.status]).toEqual([status, status]);
    expect(direct.text).toBe(viaFastify.text);
    expect(headerMap(direct.headers)).toEqual(headerMap(viaFastify.headers));
    expect(direct.headers.get('x-request-id')).toMatch(/^req_/);
    expect(direct.headers.get('x-content-type-options')).toBe('nosniff');
  }
});

test('a direct answer echoes the caller request id, is logged and counted under its route', async () => {
  const requestId = 'direct-route-check-1';
  const metricsBefore = await scrape();
  const answer = await service.request('GET', '/contacts', { apiKey: account.apiKey, query: { phoneNumber: '+14155550777' }, headers: { 'x-request-id': requestId } });
  expect(answer.status).toBe(404);
  expect(answer.headers.get('x-request-id')).toBe(requestId);
  const line = logLines.map((text) => JSON.parse(text) as Record<string, unknown>).find((entry) => entry.requestId === requestId && entry.msg === 'request');
  expect(line).toMatchObject({ method: 'GET', path: '/v1/contacts', status: 404, ip: '127.0.0.1' });
  expect(JSON.stringify(line)).not.toContain(account.apiKey);
  const metricsAfter = await scrape();
  const count = (text: string) => Number(/http_requests_total\{method="GET",route="\/v1\/contacts",status="404"\} (\d+)/.exec(text)?.[1] ?? 0);
  expect(count(metricsAfter) - count(metricsBefore)).toBe(1);
});

test('paths fastify decodes, refuses or routes itself are not taken directly', async () => {
  const before = seenByFastify.length;
  const encoded = await service.request('GET', '/contacts/ct%5Fone', { apiKey: account.apiKey, unchecked: true });
  expect(encoded.status).toBe(404);
  const malformed = await service.request('GET', '/contacts/%E0%A4%A', { apiKey: account.apiKey, unchecked: true });
  expect(malformed.status).toBe(400);
  const plain = await service.request('GET', '/lists/plain-route', { apiKey: account.apiKey, unchecked: true });
  expect(plain.text).toBe('plain route');
  const health = await service.request('GET', '/health', { unchecked: true });
  expect(health.status).toBe(200);
  // The malformed one is refused by fastify's router before any hook runs.
  expect(seenByFastify.slice(before)).toEqual(['/v1/contacts/ct%5Fone', '/v1/lists/plain-route', '/v1/health']);
});
