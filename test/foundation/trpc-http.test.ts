// /trpc answers a single call itself and hands everything else to tRPC's own handler.
// Both must say the same thing: the same request, sent once as a single call and once
// as a batch of one (which tRPC's handler answers), gets the same status and the same
// result or error shape.
import { fetch as undiciFetch } from 'undici';
import { describe, expect, test } from 'vitest';
import { serviceForFile } from '../helpers/service-for-file.ts';
import { insecureAgent, type TestService } from '../helpers/service.ts';

let service: TestService;
let account: { userId: string; apiKey: string };

serviceForFile({ accounts: [{}] }, (started) => ({ service, accounts: [account] } = started));

type Answer = { status: number; headers: { get(name: string): string | null }; body: unknown };

async function call(method: 'GET' | 'POST', path: string, input: unknown, options: { batch?: boolean; apiKey?: string } = {}): Promise<Answer> {
  const url = new URL(`${service.origin}/trpc/${path}`);
  const headers: Record<string, string> = { 'x-api-key': options.apiKey ?? account.apiKey };
  let body: string | undefined;
  const wire = options.batch ? { 0: input } : input;
  if (options.batch) url.searchParams.set('batch', '1');
  if (method === 'GET') {
    if (input !== undefined) url.searchParams.set('input', JSON.stringify(wire));
  } else {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(wire);
  }
  const response = await undiciFetch(url, { method, headers, body, dispatcher: insecureAgent });
  return { status: response.status, headers: response.headers, body: await response.json() };
}

async function expectSameAsTrpcHandler(method: 'GET' | 'POST', path: string, input: unknown, apiKey?: string): Promise<Answer> {
  const single = await call(method, path, input, { apiKey });
  const batched = await call(method, path, input, { batch: true, apiKey });
  expect(single.status).toBe(batched.status);
  expect(single.body).toEqual((batched.body as unknown[])[0]);
  expect(single.headers.get('content-type')).toMatch(/^application\/json/);
  expect(single.headers.get('vary')).toBe(batched.headers.get('vary'));
  return single;
}

describe('a single call is answered as tRPC would answer it', () => {
  test('a query result', async () => {
    const answer = await expectSameAsTrpcHandler('GET', 'lists.list', {});
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ result: { data: { success: true, lists: [] } } });
    expect(answer.headers.get('ratelimit')).toMatch(/r=\d+/);
  });

  test('a domain error keeps its status and code (404 NOT_FOUND)', async () => {
    const answer = await expectSameAsTrpcHandler('GET', 'tasks.get', { id: 'task_missing' });
    expect(answer.status).toBe(404);
    expect(answer.body).toMatchObject({ error: { data: { code: 'NOT_FOUND', httpStatus: 404, path: 'tasks.get' } } });
  });

  test('input the schema refuses (400 BAD_REQUEST)', async () => {
    const answer = await expectSameAsTrpcHandler('POST', 'lists.create', { name: 42 });
    expect(answer.status).toBe(400);
    expect(answer.body).toMatchObject({ error: { data: { code: 'BAD_REQUEST' } } });
  });

  test('a wrong key (401 UNAUTHORIZED)', async () => {
    const answer = await expectSameAsTrpcHandler('GET', 'lists.list', {}, 'sk_live_wrong');
    expect(answer.status).toBe(401);
    expect(answer.body).toMatchObject({ error: { data: { code: 'UNAUTHORIZED' } } });
  });

  test('a mutation result', async () => {
    const single = await call('POST', 'lists.create', { name: 'single' });
    const batched = await call('POST', 'lists.create', { name: 'batched' }, { batch: true });
    expect(single.status).toBe(batched.status);
    expect(single.body).toMatchObject({ result: { data: { success: true, data: { name: 'single' } } } });
    expect(Object.keys(single.body as object)).toEqual(Object.keys((batched.body as object[])[0]));
  });
});

describe("what the single-call path leaves to tRPC's handler", () => {
  test('a query sent as POST is 405 METHOD_NOT_SUPPORTED with Allow', async () => {
    const answer = await call('POST', 'lists.list', {});
    expect(answer.status).toBe(405);
    expect(answer.headers.get('allow')).toBe('GET');
  });

  test('an unknown procedure is 404 NOT_FOUND', async () => {
    const answer = await call('GET', 'lists.nothing', {});
    expect(answer.status).toBe(404);
    expect(answer.body).toMatchObject({ error: { data: { code: 'NOT_FOUND' } } });
  });

  test('input that is not JSON is 400 BAD_REQUEST', async () => {
    const response = await undiciFetch(`${service.origin}/trpc/lists.list?input=%7Bnot-json`, {
      headers: { 'x-api-key': account.apiKey },
      dispatcher: insecureAgent,
    });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ error: { data: { code: 'BAD_REQUEST' } } });
  });
});
