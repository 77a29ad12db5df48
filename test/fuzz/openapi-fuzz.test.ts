// Property: every operation of the served OpenAPI document, sent valid or broken
// requests, answers with a status below 500 that the document lists, with the
// documented body (service.request checks the document on every answer); and it
// answers as the document's request schemas say: a request they allow is never 400
// (but for the rules no schema can state, listed below), one they forbid is refused.
//
// FUZZ_RUNS sets the number of requests (default small enough for `npm test`),
// FUZZ_SEED the seed (fixed by default; fast-check prints it on failure),
// FUZZ_STATS=1 prints how many answers of each status every operation gave,
// FUZZ_KEEP_GOING=1 sends every request and fails at the end listing each kind of failure once.
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import fc from 'fast-check';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { startFakeMessagingProvider, type FakeMessagingProvider } from '../helpers/fake-messaging-provider.ts';
import { createRequestJudge, type JudgedRequest, type RequestVerdict } from '../helpers/openapi-conformance.ts';
import { startTestService, type ApiResponse, type RequestOptions, type TestService } from '../helpers/service.ts';
import { Huge, documentOperations, jsonText, queryValue, requestArbitrary, requestPath, resolvePlaceholders, type Known, type FuzzRequest, type KnownKind, type Operation } from './request-arbitrary.ts';

const RUNS = Number(process.env.FUZZ_RUNS ?? 2_000);
const SEED = Number(process.env.FUZZ_SEED ?? 20_240_611);
// A main key may make 300 requests a minute: each key of the pool sends at most
// this many fuzz requests in the whole run, leaving room for seeding and shrinking.
const REQUESTS_PER_KEY = 200;
const POOL_SIZE = Math.max(4, Math.ceil(RUNS / REQUESTS_PER_KEY));
/** A request not answered in this long counts as a hang. */
const ANSWER_WITHIN_MS = 30_000;
// Operations that revoke or replace the key that sends them run on a throwaway account.
const KEY_KILLING = new Set(['DELETE /api-keys/current', 'POST /api-keys/rotate']);

type Account = { userId: string; apiKey: string; known: Record<KnownKind, string[]> };

/**
 * Refusals (400) a request the document allows may still get, for rules no JSON Schema
 * can state; the operation or parameter description says each in words.
 */
const UNSTATABLE_RULES: { operation?: RegExp; message: RegExp; rule: string }[] = [
  { message: /^Invalid cursor$/, rule: 'a cursor is signed: only a next_cursor the service issued is one' },
  { operation: /^POST \/tags$/, message: /^Missing required parameters: phoneNumber or email$/, rule: 'one of two query parameters' },
  { operation: /webhooks/, message: /^url host does not resolve|^url must not point to/, rule: 'whether a host is public is known only by resolving it' },
  { operation: /api-keys/, message: /^expires_at must be in the future$/, rule: 'a moment relative to the request' },
  { operation: /appointments/, message: /^ends_at must be after starts_at$/, rule: 'one field compared with another' },
  { operation: /api-keys/, message: /^scopes\.sub_account_ids: .* is not a client account you manage$/, rule: 'which accounts an agency manages' },
];

let service: TestService;
let fake: FakeMessagingProvider;
let document: Record<string, any>;
let operations: Operation[];
let judge: (request: JudgedRequest) => RequestVerdict;
const pool: Account[] = [];

/** service.request bounded in time: RequestOptions has no AbortSignal, so a hang becomes a failure naming the request. */
async function send(method: string, pathname: string, options: RequestOptions): Promise<ApiResponse> {
  let timer: NodeJS.Timeout | undefined;
  const hang = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`No answer within ${ANSWER_WITHIN_MS / 1000} s`)), ANSWER_WITHIN_MS);
  });
  try {
    return await Promise.race([service.request(method, pathname, options), hang]);
  } finally {
    clearTimeout(timer);
  }
}

async function seeded(method: string, pathname: string, options: RequestOptions, status: number): Promise<any> {
  const response = await send(method, pathname, options);
  expect(response.status, `${method} ${pathname}: ${response.text}`).toBe(status);
  return response.body;
}

let seedCounter = 0;

/** An account with real objects: a contact in a list with a tag, a task, a scoped key; agencies also a client with the same. */
async function createPoolAccount(agency: boolean): Promise<Account> {
  const account = await service.createAccount({ agency });
  // Listed twice: the own account is a common `userId`.
  const known: Account['known'] = { id: [], account: [account.userId, account.userId], phone: [], email: [], tag: [] };
  const apiKey = account.apiKey;
  const owners: (string | undefined)[] = [undefined];
  if (agency) {
    seedCounter += 1;
    const client = await seeded('POST', '/sub-accounts', {
      apiKey,
      body: { email: `fuzz-client${seedCounter}-${process.pid}@example.com`, first_name: 'Cleo', last_name: 'Client', usage_limits: { monthly_credits: 100 } },
    }, 201);
    known.account.push(client.data.id, client.data.id, client.data.id);
    known.id.push(client.data.id);
    owners.push(client.data.id);
  }
  for (const userId of owners) {
    seedCounter += 1;
    const phoneNumber = `+1415555${String(seedCounter).padStart(4, '0')}`;
    const email = `fuzz${seedCounter}-${process.pid}@example.com`;
    const tag = `Tag${seedCounter}`;
    const query = userId ? { userId } : {};
    const contact = await seeded('POST', '/contacts', { apiKey, query, body: { phoneNumber, email, firstName: 'Ada' } }, 200);
    const list = await seeded('POST', '/lists', { apiKey, query, body: { name: `List ${seedCounter}` } }, 201);
    await seeded('POST', '/contacts/lists', { apiKey, query, body: { contactId: contact.data.contactId, listId: list.data.id } }, 200);
    await seeded('POST', '/tags', { apiKey, query: { ...query, tag, phoneNumber } }, 201);
    const task = await seeded('POST', '/tasks', { apiKey, query, body: { title: 'Call back', contactId: contact.data.contactId } }, 201);
    known.id.push(contact.data.contactId, list.data.id, task.data.id);
    known.phone.push(phoneNumber);
    known.email.push(email);
    known.tag.push(tag);
  }
  const scoped = await seeded('POST', '/api-keys', { apiKey, body: { label: 'fuzz', scopes: { read_only: true } } }, 201);
  known.id.push(scoped.key.id);
  return { userId: account.userId, apiKey, known };
}

beforeAll(async () => {
  // PUT /messaging/connection asks the provider; the fake answers (refusing the fuzzer's
  // tokens) where the real one, unreachable here, would make it a 502.
  fake = await startFakeMessagingProvider();
  service = await startTestService({ env: { MESSAGING_API_URL: fake.url, WEBHOOK_ALLOW_HOSTS: 'localhost' } });
  document = (await service.request('GET', '/v1/openapi.json')).body;
  operations = documentOperations(document);
  judge = createRequestJudge(document);
  // Two of three accounts are agencies with a client, so `userId` and /sub-accounts reach something.
  const kinds = Array.from({ length: POOL_SIZE }, (_, index) => index % 3 !== 2);
  for (let start = 0; start < kinds.length; start += 4) {
    pool.push(...(await Promise.all(kinds.slice(start, start + 4).map(createPoolAccount))));
  }
  // Each account also knows another account's client: someone else's sub-account.
  const clients = pool.map((account) => account.known.account[2]).filter(Boolean);
  for (const [index, account] of pool.entries()) account.known.account.push(clients[(index + 1) % clients.length], 'usr_doesnotexist');
}, 60_000 + POOL_SIZE * 5_000);

afterAll(async () => {
  if (process.env.FUZZ_STATS) console.log([...tally].sort().map(([bucket, count]) => `${count}\t${bucket}`).join('\n'));
  await service?.stop();
  await fake?.close();
});

function shorten(text: string, length = 400): string {
  return text.length > length ? `${text.slice(0, length)}… (${text.length} characters)` : text;
}

let sent = 0;
/** Answers by operation, mutation and status, printed when FUZZ_STATS is set. */
const tally = new Map<string, number>();
/** With FUZZ_KEEP_GOING: the first failure of each operation and mutation. */
const failures = new Map<string, string>();

async function sendFuzzRequest(request: FuzzRequest): Promise<void> {
  let account: Account = pool[sent++ % pool.length];
  if (KEY_KILLING.has(request.operation)) {
    const throwaway = await service.createAccount({ agency: true });
    account = { ...throwaway, known: { ...account.known, account: [throwaway.userId] } };
  }
  const known = (placeholder: Known) => {
    const values = account.known[placeholder.kind];
    return values.length ? values[placeholder.pick % values.length] : 'none';
  };
  const method = request.operation.slice(0, request.operation.indexOf(' '));
  const pathname = requestPath(request, known);
  const query: Record<string, string> = {};
  for (const [name, value] of Object.entries(request.query)) if (value !== undefined) query[name] = queryValue(value, known);
  const headers: Record<string, string> = {};
  const key = request.credentials.wrongKey ?? account.apiKey;
  if (request.credentials.in === 'query') query.apiKey = key;
  if (request.credentials.in === 'header') headers['x-api-key'] = key;
  if (request.credentials.in === 'bearer') headers.authorization = `Bearer ${key}`;
  let rawBody: string | undefined;
  if (request.body.kind === 'json') {
    rawBody = jsonText(request.body.value, known);
    headers['content-type'] = 'application/json';
  } else if (request.body.kind === 'raw') {
    rawBody = request.body.text instanceof Huge ? request.body.text.text() : request.body.text;
    if (request.body.contentType) headers['content-type'] = request.body.contentType;
  }
  const described = () =>
    `${method} ${shorten(pathname, 200)} query=${shorten(JSON.stringify(query), 300)} headers=${shorten(JSON.stringify(headers), 200)} body=${rawBody === undefined ? '(none)' : shorten(JSON.stringify(rawBody))}`;
  let response: ApiResponse;
  try {
    response = await send(method, pathname, { query, headers, rawBody });
  } catch (error) {
    throw new Error(`${(error as Error).message} (${String((error as { cause?: unknown }).cause)})\nrequest (${request.mutation}): ${described()}`);
  }
  const bucket = `${request.operation} ${request.mutation} ${response.status}`;
  tally.set(bucket, (tally.get(bucket) ?? 0) + 1);
  if (response.status >= 500) {
    throw new Error(`${response.status} for a ${request.mutation === 'none' ? 'valid request' : `request broken by ${request.mutation}`}\nrequest: ${described()}\nanswer: ${shorten(response.text, 600)}`);
  }
  const verdict = judge({ method, pathname, query: Object.entries(query), body: judgedBody(request.body, rawBody) });
  if (verdict.allowed === true && response.status === 400) {
    const message = refusalMessage(response);
    if (!UNSTATABLE_RULES.some((rule) => (!rule.operation || rule.operation.test(request.operation)) && rule.message.test(message))) {
      throw new Error(`400 for a request the document allows (${request.mutation})\nrequest: ${described()}\nanswer: ${shorten(response.text, 600)}`);
    }
  }
  if (verdict.allowed === false && response.status < 400) {
    throw new Error(`${response.status} for a request the document forbids (${request.mutation}: ${verdict.why})\nrequest: ${described()}\nanswer: ${shorten(response.text, 300)}`);
  }
}

/** The body as the document judges it: JSON, none (an empty body is none), or something it does not describe. */
function judgedBody(body: FuzzRequest['body'], rawBody: string | undefined): JudgedRequest['body'] {
  if (rawBody === undefined || rawBody.trim() === '') return { kind: 'none' };
  const json = body.kind === 'json' || (body.kind === 'raw' && /^application\/json\s*(;\s*charset=utf-8)?$/i.test(body.contentType ?? ''));
  if (!json) return { kind: 'other' };
  try {
    const value: unknown = JSON.parse(rawBody);
    // The service reads `null` as no body; the document has no word for it.
    return value === null ? { kind: 'other' } : { kind: 'json', value };
  } catch {
    return { kind: 'other' };
  }
}

/** What a refusal says, whatever the endpoint's error shape. */
function refusalMessage(response: ApiResponse): string {
  const body = response.body as { error?: unknown; message?: unknown } | string | undefined;
  if (typeof body === 'string') return body;
  return String(body?.error ?? body?.message ?? response.text);
}

test(
  'every operation answers valid and broken requests with a documented status below 500 and a documented body',
  async () => {
    expect(operations.length).toBeGreaterThan(0);
    const property = process.env.FUZZ_KEEP_GOING
      ? async (request: FuzzRequest) => {
          await sendFuzzRequest(request).catch((error: Error) => {
            const kind = `${request.operation} ${request.mutation} ${/^(\S+ \S+|\d+)/.exec(error.message)?.[0]}`;
            if (!failures.has(kind)) failures.set(kind, error.message);
          });
        }
      : sendFuzzRequest;
    await fc.assert(fc.asyncProperty(requestArbitrary(document, operations), property), { seed: SEED, numRuns: RUNS });
    expect([...failures].map(([kind, message]) => `${kind}\n${message}`)).toEqual([]);
  },
  120_000 + RUNS * 500,
);

test('the requests generated as valid match the schemas of their operation', () => {
  const ajv = new Ajv2020({ strict: false });
  (addFormatsModule as unknown as (ajv: Ajv2020) => void)(ajv);
  ajv.addSchema(document, 'openapi.json');
  const pointer = (segment: string) => segment.replace(/~/g, '~0').replace(/\//g, '~1');
  const samples = fc.sample(requestArbitrary(document, operations), { seed: SEED, numRuns: 3_000 }).filter((request) => request.mutation === 'none');
  const mismatches: string[] = [];
  for (const request of samples) {
    const [method, path] = request.operation.split(' ');
    const operation = operations.find((candidate) => candidate.method === method && candidate.path === path)!;
    const base = `openapi.json#/paths/${pointer(path)}/${method.toLowerCase()}`;
    // Real values are those of the seeded accounts.
    const resolved = (value: unknown) => resolvePlaceholders(value, (known) => pool[0].known[known.kind][0]);
    if (request.body.kind === 'json') {
      const validate = ajv.getSchema(`${base}/requestBody/content/application~1json/schema`)!;
      if (!validate(resolved(request.body.value))) mismatches.push(`${request.operation} body ${JSON.stringify(request.body.value)}: ${ajv.errorsText(validate.errors)}`);
    }
    for (const [name, value] of [...Object.entries(request.pathParams), ...Object.entries(request.query)]) {
      const parameter = [...operation.pathParams, ...operation.queryParams].find((candidate) => candidate.name === name)!;
      const validate = ajv.compile(parameter.schema as object);
      if (!validate(resolved(value))) mismatches.push(`${request.operation} ${name}=${JSON.stringify(value)}: ${ajv.errorsText(validate.errors)}`);
    }
  }
  expect(samples.length).toBeGreaterThan(1_000);
  expect(mismatches.slice(0, 10)).toEqual([]);
});
