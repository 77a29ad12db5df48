// The same procedures on two surfaces: /v1 REST with its OpenAPI document and
// docs page, and /trpc for internal TypeScript apps (HTTP and WebSocket).
import { Validator } from '@seriousme/openapi-schema-validator';
import { createTRPCClient, createWSClient, httpLink, wsLink } from '@trpc/client';
import { fetch as undiciFetch } from 'undici';
import WebSocket from 'ws';
import { expect, test } from 'vitest';
import type { AppRouter } from '../../routers/index.ts';
import { appRouter } from '../../routers/index.ts';
import { serviceForFile } from '../helpers/service-for-file.ts';
import { insecureAgent, type TestService } from '../helpers/service.ts';

let service: TestService;
let account: { userId: string; apiKey: string };

/** An internal app's tRPC client over HTTP (accepting the self-signed certificate). */
function httpClient(apiKey: string) {
  return createTRPCClient<AppRouter>({
    links: [
      httpLink({
        url: `${service.origin}/trpc`,
        headers: { 'x-api-key': apiKey },
        fetch: (url, init) => undiciFetch(url as string, { ...(init as object), dispatcher: insecureAgent }) as never,
      }),
    ],
  });
}

serviceForFile({ accounts: [{}] }, (started) => ({ service, accounts: [account] } = started));

test('/v1/openapi.json is a valid OpenAPI document', async () => {
  const response = await service.request('GET', '/openapi.json');
  expect(response.status).toBe(200);
  const validator = new Validator();
  const result = await validator.validate(response.body);
  expect(result.errors ?? []).toEqual([]);
  expect(result.valid).toBe(true);
});

test('the document lists every /v1 operation with its parameters and auth', async () => {
  const document = (await service.request('GET', '/openapi.json')).body;
  expect(Object.keys(document.components.securitySchemes).sort()).toEqual(['apiKeyHeader', 'apiKeyQuery', 'bearerAuth']);
  const procedures = appRouter._def.procedures as unknown as Record<string, { _def: { type: string; meta?: { openapi?: { method: string; path: string; protect?: boolean }; agencyOnly?: boolean; ownAccountOnly?: boolean } } }>;
  let checked = 0;
  for (const procedure of Object.values(procedures)) {
    // Subscriptions are a stream over the /trpc WebSocket; REST has no such operation.
    if (procedure._def.type === 'subscription') continue;
    const openapi = procedure._def.meta?.openapi;
    expect(openapi, 'every procedure is on the REST surface').toBeDefined();
    const operation = document.paths[openapi!.path]?.[openapi!.method.toLowerCase()];
    expect(operation, `${openapi!.method} ${openapi!.path}`).toBeDefined();
    if (openapi!.protect !== false) {
      expect(operation.security.length).toBeGreaterThan(0);
      // Agency-only and key-management endpoints refuse userId, so only the others offer it.
      const names = operation.parameters.map((parameter: { name: string }) => parameter.name);
      expect(names).toContain('apiKey');
      if (procedure._def.meta?.agencyOnly || procedure._def.meta?.ownAccountOnly) expect(names).not.toContain('userId');
      else expect(names).toContain('userId');
      expect(Object.keys(operation.responses)).toContain('401');
    }
    for (const match of openapi!.path.matchAll(/\{(\w+)\}/g)) {
      expect(operation.parameters.some((parameter: { name: string; in: string }) => parameter.name === match[1] && parameter.in === 'path')).toBe(true);
    }
    checked += 1;
  }
  expect(checked).toBeGreaterThan(5);
  expect(document.paths['/lists'].post.responses['201']).toBeDefined();
  expect(document.paths['/health'].get.responses['200'].content['text/plain']).toBeDefined();
  expect(document.paths['/contacts'].get.responses['400'].content['text/plain']).toBeDefined();
});

test('/v1/docs renders the document for people', async () => {
  const page = await service.request('GET', '/docs');
  expect(page.status).toBe(200);
  expect(page.contentType).toMatch(/^text\/html/);
  expect(page.text).toContain('/v1/docs/init.js');
  const init = await service.request('GET', '/docs/init.js');
  expect(init.text).toContain('/v1/openapi.json');
  const bundle = await service.request('GET', '/docs/swagger-ui-bundle.js');
  expect(bundle.status).toBe(200);
  expect(bundle.text.length).toBeGreaterThan(100_000);
});

test('GET /health answers text/plain', async () => {
  const response = await service.request('GET', '/health');
  expect(response.status).toBe(200);
  expect(response.contentType).toMatch(/^text\/plain/);
  expect(response.text).toMatch(/running/);
});

test('an internal app calls procedures through @trpc/client over HTTP', async () => {
  const client = httpClient(account.apiKey);
  const created = await client.contacts.create.mutate({ phoneNumber: '+14155557001', firstName: 'Trpc' });
  expect(created).toEqual({ success: true, data: expect.objectContaining({ contactId: expect.stringMatching(/^ct_/) }) });
  const found = await client.contacts.find.query({ phoneNumber: '+14155557001' });
  expect(found).toEqual({ success: true, contactId: created.data.contactId });
  // Domain errors keep their meaning on /trpc: a 404 is NOT_FOUND, not a 500.
  await expect(client.contacts.find.query({ phoneNumber: '+14155557999' })).rejects.toMatchObject({
    data: { code: 'NOT_FOUND', httpStatus: 404 },
  });
});

test('/trpc refuses a wrong key with UNAUTHORIZED', async () => {
  const client = httpClient('mk_wrong');
  await expect(client.lists.list.query({})).rejects.toMatchObject({ data: { code: 'UNAUTHORIZED', httpStatus: 401 } });
});

test('/trpc also serves procedures over WebSocket (ready for subscriptions)', async () => {
  const wsClient = createWSClient({
    url: `${service.origin.replace('https', 'wss')}/trpc?apiKey=${account.apiKey}`,
    WebSocket: class extends WebSocket {
      constructor(url: string | URL, protocols?: string | string[]) {
        super(url, protocols, { rejectUnauthorized: false });
      }
    } as never,
  });
  try {
    const client = createTRPCClient<AppRouter>({ links: [wsLink({ client: wsClient })] });
    const lists = await client.lists.list.query({});
    expect(lists).toEqual({ success: true, lists: [], next_cursor: null });
  } finally {
    await wsClient.close();
  }
});

test('inputs are not coerced: "false" is not a boolean on /v1, nor afterwards on /trpc', async () => {
  const rest = await service.request('POST', '/contacts', { apiKey: account.apiKey, body: { phoneNumber: '+14155557002', is_bot_active: 'false' } });
  expect(rest.status).toBe(400);
  expect(rest.body.error).toMatch(/^is_bot_active/);
  const client = httpClient(account.apiKey);
  await expect(
    client.contacts.create.mutate({ phoneNumber: '+14155557003', is_bot_active: 'false' as unknown as boolean }),
  ).rejects.toMatchObject({ data: { code: 'BAD_REQUEST' } });
  // Query strings are text: a declared number or boolean is read from its exact text.
  const page = await service.request('GET', '/contacts', { apiKey: account.apiKey, query: { limit: '1' } });
  expect(page.status).toBe(200);
  const bad = await service.request('GET', '/contacts', { apiKey: account.apiKey, query: { limit: 'ten' } });
  expect(bad.status).toBe(400);
});

test('path parameters arrive percent-decoded', async () => {
  const created = await service.request('POST', '/lists', { apiKey: account.apiKey, body: { name: 'Decode' } });
  const id: string = created.body.data.id;
  const encoded = id.replace('_', '%5F');
  const response = await service.request('GET', `/lists/${encoded}`, { apiKey: account.apiKey });
  expect(response.status).toBe(200);
  expect(response.body.data.id).toBe(id);
});

test('/trpc responses carry the rate-limit headers like /v1', async () => {
  const response = await undiciFetch(`${service.origin}/trpc/lists.list?input=${encodeURIComponent('{}')}`, {
    headers: { 'x-api-key': account.apiKey },
    dispatcher: insecureAgent,
  });
  expect(response.status).toBe(200);
  expect(response.headers.get('ratelimit-policy')).toMatch(/"account";q=1200;w=60/);
  expect(response.headers.get('ratelimit')).toMatch(/r=\d+/);
});

test("POST /tags documents its query-string fields, as the specification sends them", async () => {
  const document = (await service.request('GET', '/openapi.json')).body;
  const names = document.paths['/tags'].post.parameters.filter((parameter: { in: string }) => parameter.in === 'query').map((parameter: { name: string }) => parameter.name);
  expect(names).toEqual(expect.arrayContaining(['tag', 'phoneNumber', 'email']));
});
