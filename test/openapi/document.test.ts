// openapi.json in the repository is the served document, byte for byte, so every
// change to the API shows in review. `npm run openapi` rewrites it.
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import fc from 'fast-check';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { startTestService, type TestService } from '../helpers/service.ts';

const committedPath = path.resolve(import.meta.dirname, '../../openapi.json');

// `npm run openapi` sets this: the file is rewritten from the served document and the
// comparison, which would then only compare the file with itself, is skipped.
const updating = process.env.UPDATE_OPENAPI === '1';

let service: TestService;
let served: string;
beforeAll(async () => {
  service = await startTestService();
  served = `${JSON.stringify((await service.request('GET', '/openapi.json')).body, null, 2)}\n`;
});
afterAll(async () => {
  await service?.stop();
});

test.skipIf(updating)('the committed openapi.json is exactly the document the service serves (run `npm run openapi` after an API change)', async () => {
  const committed = await readFile(committedPath, 'utf8').catch(() => '');
  expect(committed, 'openapi.json is out of date: run `npm run openapi` and commit it').toBe(served);
});

test.runIf(updating)('UPDATE_OPENAPI=1: openapi.json is rewritten from the served document (not compared)', async () => {
  const before = await readFile(committedPath, 'utf8').catch(() => '');
  await writeFile(committedPath, served);
  console.log(before === served ? 'openapi.json: already up to date' : 'openapi.json: rewritten from the served document; review and commit it');
});

test('every authenticated operation takes apiKey as a query parameter and lists 401, 403, 429 with Retry-After, 413, 431 and 503', () => {
  const document = JSON.parse(served);
  for (const [pathName, item] of Object.entries(document.paths as Record<string, Record<string, any>>)) {
    for (const [method, operation] of Object.entries(item)) {
      if (Array.isArray(operation.security) && operation.security.length === 0) continue;
      const where = `${method.toUpperCase()} ${pathName}`;
      expect(operation.parameters.map((parameter: { name: string; in: string }) => `${parameter.in}:${parameter.name}`), where).toContain('query:apiKey');
      expect(Object.keys(operation.responses), where).toEqual(expect.arrayContaining(['400', '401', '403', '413', '429', '431', '500', '503']));
      expect(operation.responses['429'].headers['Retry-After'].required, where).toBe(true);
    }
  }
});

test('the document states the rules the service enforces beyond field types: updates need a field, summaries take exactly one identifier, cursors are opaque', () => {
  const document = JSON.parse(served);
  const body = (pathName: string, method: string) => document.paths[pathName][method].requestBody.content['application/json'].schema;
  for (const [pathName, method] of [['/contacts/{contactId}', 'put'], ['/api-keys/{id}', 'patch'], ['/lists/{listId}', 'put'], ['/tasks/{id}', 'put'], ['/sub-accounts/{id}', 'put'], ['/sub-accounts/{id}/usage-limits', 'put']]) {
    expect(body(pathName, method).minProperties, `${method} ${pathName}`).toBe(1);
  }
  expect(body('/summaries', 'post').oneOf.map((branch: { required: string[] }) => branch.required)).toEqual([['phoneNumber'], ['email']]);
  const cursor = document.paths['/contacts'].get.parameters.find((parameter: { name: string }) => parameter.name === 'cursor');
  expect(cursor.schema.pattern).toBeDefined();
  // Agency-only endpoints refuse userId, so they do not offer it.
  expect(document.paths['/sub-accounts'].get.parameters.map((parameter: { name: string }) => parameter.name)).not.toContain('userId');
  // The description names only sections the document contains.
  const sections = new Set(Object.values(document.paths as Record<string, Record<string, { tags?: string[] }>>).flatMap((item) => Object.values(item).flatMap((operation) => operation.tags ?? [])));
  for (const named of /Sections: ([^.]+)\./.exec(document.info.description)![1].split(', ')) expect(sections).toContain(named);
});

test("the 403 of an operation says what an input flag asks of a scoped key: apply_to_sub_accounts needs sub_account_ids [\"*\"], generate_signing_secret the Integrations section", () => {
  const document = JSON.parse(served);
  const forbidden = (pathName: string, method: string) => document.paths[pathName][method].responses['403'];
  for (const [pathName, method] of [['/webhooks', 'post'], ['/webhooks/{webhookId}', 'put']]) {
    const response = forbidden(pathName, method);
    expect(response.description, `${method} ${pathName}`).toContain('`apply_to_sub_accounts: true` acts on every client account, so a scoped key needs `sub_account_ids` `["*"]`');
    expect(response.content['application/json'].schema.required, `${method} ${pathName}`).toEqual(['success', 'error', 'error_code']);
  }
  expect(forbidden('/webhooks', 'post').description).toContain('`generate_signing_secret: true` also needs the Integrations section with a writable key');
  expect(forbidden('/webhooks/{webhookId}', 'put').description).not.toContain('generate_signing_secret');
  // Operations without such a flag keep the plain description.
  expect(forbidden('/webhooks', 'get').description).toBe('Forbidden: plan lacks API access, or outside the key scopes');
  const body = (pathName: string, method: string) => document.paths[pathName][method].requestBody.content['application/json'].schema.properties;
  expect(body('/webhooks/{webhookId}', 'put').apply_to_sub_accounts.description).toMatch(/new url or subscribed_to on a subscription that applies to sub-accounts/);
});

test('every paged operation states what its cursor must be and that another is 400; the service refuses exactly that', async () => {
  const document = JSON.parse(served);
  const account = await service.createAccount({ agency: true });
  // Of the documented form, but never issued by the service.
  const forged = `${Buffer.from('{"k":"x"}').toString('base64url')}.${'A'.repeat(43)}`;
  const paged: string[] = [];
  for (const [pathName, item] of Object.entries(document.paths as Record<string, Record<string, any>>)) {
    for (const [method, operation] of Object.entries(item)) {
      const cursor = (operation.parameters ?? []).find((parameter: { name: string; in: string }) => parameter.name === 'cursor' && parameter.in === 'query');
      if (!cursor) continue;
      const where = `${method.toUpperCase()} ${pathName}`;
      paged.push(where);
      expect(cursor.schema, where).toMatchObject({ type: 'string', minLength: 3, pattern: expect.any(String) });
      expect(new RegExp(cursor.schema.pattern).test(forged), where).toBe(true);
      expect(operation.responses['400'].description, where).toMatch(/cursor/);
      if (pathName.includes('{')) continue;
      // service.request checks the answer against the document too.
      const response = await service.request(method.toUpperCase(), pathName, { apiKey: account.apiKey, query: { cursor: forged } });
      expect(response.status, where).toBe(400);
      expect(response.text, where).toContain('Invalid cursor');
    }
  }
  expect(paged).toEqual(expect.arrayContaining(['GET /contacts', 'GET /lists', 'GET /tasks', 'GET /broadcasts', 'GET /webhooks/{webhookId}/deliveries']));
});

test('userId: empty is the same as absent on authenticated operations, as documented; the widget message endpoint, which needs it, documents minLength 1', async () => {
  const document = JSON.parse(served);
  const account = await service.createAccount();
  const withEmpty = await service.request('GET', '/lists', { apiKey: account.apiKey, query: { userId: '' } });
  expect(withEmpty.status).toBe(200);
  expect(withEmpty.body).toEqual((await service.request('GET', '/lists', { apiKey: account.apiKey })).body);
  const userIdOf = (pathName: string, method: string) =>
    document.paths[pathName][method].parameters.find((parameter: { name: string; in: string }) => parameter.name === 'userId' && parameter.in === 'query');
  expect(userIdOf('/lists', 'get').schema.minLength).toBeUndefined();
  expect(userIdOf('/incoming-chat-widget-message', 'post').schema.minLength).toBe(1);
  const message = { messageType: 'text', customData: { body: 'hi', fromId: 'visitor-empty', toId: 'cw_none' } };
  for (const request of [{ query: { userId: '' }, body: message }, { body: { ...message, userId: '' } }]) {
    const refused = await service.request('POST', '/incoming-chat-widget-message', request);
    expect(refused.status).toBe(400);
    expect(refused.body.error).toBe('userId is required');
  }
});

/** Every request schema of the procedures' operations (plain routes read their own input), with where it is. */
function requestSchemas(document: Record<string, any>): { where: string; schema: Record<string, any> }[] {
  const found: { where: string; schema: Record<string, any> }[] = [];
  for (const [pathName, item] of Object.entries(document.paths as Record<string, Record<string, any>>)) {
    for (const [method, operation] of Object.entries(item)) {
      if (!String(operation.operationId).includes('-')) continue;
      const where = `${method.toUpperCase()} ${pathName}`;
      for (const parameter of operation.parameters ?? []) if (parameter.in !== 'header') found.push({ where: `${where} ${parameter.name}`, schema: parameter.schema });
      const body = operation.requestBody?.content?.['application/json']?.schema;
      if (body) found.push({ where: `${where} body`, schema: body });
    }
  }
  return found;
}

/** Every subschema that constrains values (not the branches of `oneOf` constraints, which only add patterns). */
function subschemas(schema: Record<string, any>, where: string, visit: (schema: Record<string, any>, where: string) => void): void {
  visit(schema, where);
  for (const [name, member] of Object.entries((schema.properties ?? {}) as Record<string, any>)) subschemas(member, `${where}.${name}`, visit);
  if (schema.items && typeof schema.items === 'object') subschemas(schema.items, `${where}[]`, visit);
  if (schema.additionalProperties && typeof schema.additionalProperties === 'object' && !schema.additionalProperties.$ref) subschemas(schema.additionalProperties, `${where}{}`, visit);
  for (const branch of schema.anyOf ?? []) subschemas(branch, where, visit);
}

test('the document states the input rules: no request string or member name may contain a NUL, and what a schema leaves free is JSON of such text nested no deeper than 8 levels', () => {
  const document = JSON.parse(served);
  const ajv = new Ajv2020({ strict: false });
  /** Whether a string schema refuses values of its own with a NUL put in (at the start, the middle, the end). */
  const refusesNul = (schema: Record<string, any>) => {
    const validate = ajv.compile({ ...schema, type: 'string' });
    const samples = typeof schema.pattern === 'string' ? fc.sample(fc.stringMatching(new RegExp(schema.pattern, 'u')), { numRuns: 5, seed: 1 }) : ['text'];
    return samples.every((sample) => [0, sample.length >> 1, sample.length].every((at) => !validate(sample.slice(0, at) + '\u0000' + sample.slice(at))));
  };
  const unruled: string[] = [];
  for (const { where, schema } of requestSchemas(document)) {
    subschemas(schema, where, (subschema, at) => {
      const types = [subschema.type].flat();
      const closed = subschema.enum !== undefined || subschema.const !== undefined;
      if (types.includes('string') && !closed && !refusesNul(subschema)) unruled.push(`${at} (string)`);
      if (types.includes('object') && subschema.additionalProperties !== false) {
        if (!subschema.propertyNames || !refusesNul(subschema.propertyNames)) unruled.push(`${at} (member names)`);
        if (!/^#\/components\/schemas\/JsonValue\d+$/.test(subschema.additionalProperties?.$ref) && typeof subschema.additionalProperties !== 'object') unruled.push(`${at} (unnamed members)`);
      }
      if (Object.keys(subschema).length === 0) unruled.push(`${at} (free)`);
    });
  }
  expect(unruled).toEqual([]);
  // Unnamed members of the body nest as deep as the input rule allows below the body (8 levels in all).
  expect(document.paths['/lists'].post.requestBody.content['application/json'].schema.additionalProperties).toEqual({ $ref: '#/components/schemas/JsonValue7' });
  expect(document.components.schemas.JsonValue7.anyOf).toContainEqual({ type: 'string', pattern: '^[^\\u0000]*$' });
  expect(document.components.schemas.JsonValue7.anyOf[2].items).toEqual({ $ref: '#/components/schemas/JsonValue6' });
  expect(document.components.schemas.JsonValue0.anyOf.map((branch: { type: unknown }) => branch.type)).toEqual([['null', 'boolean', 'number'], 'string']);
  // The API key is a secret, not a value to fill in from answers.
  const apiKey = document.paths['/lists'].get.parameters.find((parameter: { name: string }) => parameter.name === 'apiKey');
  expect(apiKey.schema).toMatchObject({ type: 'string', format: 'password' });
  // Headers carry no NUL rule: HTTP cannot send a NUL in a header, so a request breaking the rule could not be sent.
  const headers = Object.values(document.paths as Record<string, Record<string, any>>)
    .flatMap((item) => Object.values(item))
    .flatMap((operation) => (operation.parameters ?? []).filter((parameter: { in: string }) => parameter.in === 'header'));
  expect(headers.length).toBeGreaterThan(0);
  expect(headers.filter((parameter: { schema?: { pattern?: string } }) => parameter.schema?.pattern === '^[^\\u0000]*$')).toEqual([]);
});

test('a GET or DELETE with a query parameter its operation does not take is 400 naming it; a body member the operation does not read is accepted', async () => {
  const account = await service.createAccount();
  for (const [method, pathName] of [['GET', '/lists'], ['DELETE', '/contacts/lists']] as const) {
    const response = await service.request(method, pathName, { apiKey: account.apiKey, query: { limt: '5' } });
    expect(response.status, `${method} ${pathName}`).toBe(400);
    // The envelope (GET /lists) or plain text (DELETE /contacts/lists), as each endpoint's 400 is.
    expect(response.body?.error ?? response.text, `${method} ${pathName}`).toBe('Unknown query parameter "limt"');
  }
  const created = await service.request('POST', '/lists', { apiKey: account.apiKey, body: { name: 'Extra', extra: { nested: ['member'] } } });
  expect(created.status).toBe(201);
});
