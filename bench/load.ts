// One autocannon run in its own process, so the load generator never shares an event loop
// with the server it measures. Reads a LoadSpec (JSON file named by argv[2]), prints one
// JSON line (LoadResult) on stdout.
//
// Requests rotate through the seeded accounts' keys, one key after another from a given
// offset, so each key's share of the load stays far below its 300-per-minute budget.
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';

export type LoadTarget = { apiKey: string; listId: string; phones: string[] };

export type LoadSpec = {
  /** Base URLs without a path (`https://127.0.0.1:port`); connections are spread over them. */
  urls: string[];
  kind: 'read-rest' | 'read-trpc' | 'write-rest';
  connections: number;
  durationSeconds: number;
  /** Stop after this many requests instead (duration ignored). */
  amount?: number;
  /** Requests per second over all connections (a fixed, moderate rate); unlimited when unset. */
  overallRate?: number;
  /** JSON file holding LoadTarget[]. */
  targetsFile: string;
  /** Where in the key rotation this run starts. */
  offset: number;
  /** Writes of earlier runs: this run's new phone numbers continue after theirs, so none collide. */
  writeStart?: number;
};

export type LoadResult = {
  /** Requests built (including any cut off at the end): where the next run continues. */
  issued: number;
  requests: number;
  seconds: number;
  requestsPerSecond: number;
  /** Milliseconds. */
  p50: number;
  p99: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  statusCodes: Record<string, number>;
};

type AutocannonRequest = { method?: string; path?: string; headers?: Record<string, string>; body?: string };
type AutocannonResult = {
  duration: number;
  latency: { p50: number; p99: number };
  non2xx: number;
  errors: number;
  timeouts: number;
  '1xx': number;
  '2xx': number;
  '3xx': number;
  '4xx': number;
  '5xx': number;
  statusCodeStats?: Record<string, { count: number }>;
};
type Autocannon = (options: Record<string, unknown>) => Promise<AutocannonResult>;

// autocannon ships no types; its programmatic API is one function returning a promise.
const autocannon = createRequire(import.meta.url)('autocannon') as Autocannon;

// 415 is the seeded contacts' area code.
const WRITE_AREA_CODES = ['201', '202', '203', '205', '206', '207', '208', '209', '210', '212'];

export function requestFor(spec: LoadSpec, targets: LoadTarget[], index: number): AutocannonRequest {
  const slot = spec.offset + index;
  const target = targets[slot % targets.length];
  const phone = target.phones[Math.floor(slot / targets.length) % target.phones.length];
  switch (spec.kind) {
    case 'read-rest':
      return {
        method: 'GET',
        path: `/v1/contacts?phoneNumber=${encodeURIComponent(phone)}&apiKey=${encodeURIComponent(target.apiKey)}`,
      };
    case 'read-trpc':
      return {
        method: 'GET',
        path: `/trpc/contacts.find?input=${encodeURIComponent(JSON.stringify({ phoneNumber: phone }))}`,
        headers: { 'x-api-key': target.apiKey },
      };
    case 'write-rest': {
      const number = (spec.writeStart ?? 0) + index;
      // US numbers: an area code, then one of its 8 million 7-digit local numbers.
      const areaCode = WRITE_AREA_CODES[Math.floor(number / 8_000_000)];
      if (!areaCode) throw new Error('more writes than the bench has phone numbers for');
      return {
        method: 'POST',
        path: `/v1/contacts?apiKey=${encodeURIComponent(target.apiKey)}`,
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ phoneNumber: `+1${areaCode}${2_000_000 + (number % 8_000_000)}`, listId: target.listId }),
      };
    }
  }
}

async function main() {
  const spec = JSON.parse(readFileSync(process.argv[2], 'utf8')) as LoadSpec;
  const targets = JSON.parse(readFileSync(spec.targetsFile, 'utf8')) as LoadTarget[];
  let next = 0;
  const result = await autocannon({
    url: spec.urls.length === 1 ? spec.urls[0] : spec.urls,
    connections: spec.connections,
    ...(spec.amount ? { amount: spec.amount } : { duration: spec.durationSeconds }),
    ...(spec.overallRate ? { overallRate: spec.overallRate } : {}),
    timeout: 10,
    requests: [{ setupRequest: (request: AutocannonRequest) => ({ ...request, ...requestFor(spec, targets, next++) }) }],
  });
  const requests = result['1xx'] + result['2xx'] + result['3xx'] + result['4xx'] + result['5xx'];
  const statusCodes: Record<string, number> = {};
  for (const [code, stat] of Object.entries(result.statusCodeStats ?? {})) statusCodes[code] = stat.count;
  const output: LoadResult = {
    issued: next,
    requests,
    seconds: result.duration,
    requestsPerSecond: requests / result.duration,
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    statusCodes,
  };
  process.stdout.write(`${JSON.stringify(output)}\n`);
}

if (import.meta.main) await main();
