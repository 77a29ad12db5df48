// One input rule for every procedure, on /v1 and /trpc alike: text with NUL
// characters or lone UTF-16 surrogates, JSON nested deeper than MAX_INPUT_DEPTH and integers beyond what
// their PostgreSQL `integer` column holds are 400 in the endpoint's error shape,
// never a 500 from the database or a stack overflow.
import { createTRPCClient, httpLink } from '@trpc/client';
import { fetch as undiciFetch } from 'undici';
import { describe, expect, test } from 'vitest';
import { z } from 'zod';
import { appRouter, type AppRouter } from '../../routers/index.ts';
import { checkRequestInput, findInputProblem, INT32_MAX, INT32_MIN, MAX_INPUT_DEPTH } from '../../server/input-rules.ts';
import { serviceForFile } from '../helpers/service-for-file.ts';
import { insecureAgent, startTestService, type TestService } from '../helpers/service.ts';

let service: TestService;
let agency: { userId: string; apiKey: string };

serviceForFile({ accounts: [{ agency: true }] }, (started) => ({ service, accounts: [agency] } = started));

function envelope(error: string) {
  return { success: false, error, error_code: 400 };
}

/** `levels` nested objects as JSON text, built without recursion. */
function nestedJson(levels: number): string {
  return '{"a":'.repeat(levels) + '1' + '}'.repeat(levels);
}

/** A POST to /trpc as an internal app sends it (JSON body, key in a header). */
async function trpcPost(procedure: string, json: string, query = '') {
  const response = await undiciFetch(`${service.origin}/trpc/${procedure}${query}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': agency.apiKey },
    body: json,
    dispatcher: insecureAgent,
  });
  return { status: response.status, body: (await response.json()) as { error: { message: string; data: { code: string; httpStatus: number } } } };
}

function trpcClient() {
  return createTRPCClient<AppRouter>({
    links: [
      httpLink({
        url: `${service.origin}/trpc`,
        headers: { 'x-api-key': agency.apiKey },
        fetch: (url, init) => undiciFetch(url as string, { ...(init as object), dispatcher: insecureAgent }) as never,
      }),
    ],
  });
}

async function contactCount(accountId: string): Promise<number> {
  const { rows } = await service.services.pool.query<{ count: string }>('select count(*) from contacts where account_id = $1', [accountId]);
  return Number(rows[0].count);
}

describe('text with a NUL character is 400, never a database error', () => {
  test('in userId, which authentication reads from the query string (GET /v1/api-keys?userId=%00)', async () => {
    const response = await service.request('GET', '/api-keys', { apiKey: agency.apiKey, query: { userId: '\u0000' } });
    expect(response.status).toBe(400);
    expect(response.body).toEqual(envelope('userId must not contain a NUL character (\\u0000)'));
  });

  test('in the API key itself', async () => {
    const response = await service.request('GET', '/lists', { apiKey: 'mk_\u0000' });
    expect(response.status).toBe(400);
    expect(response.body).toEqual(envelope('apiKey must not contain a NUL character (\\u0000)'));
  });

  test('in a path parameter, answered in the endpoint\'s own 400 shape', async () => {
    const response = await service.request('GET', '/contacts/tags/ct_%00', { apiKey: agency.apiKey });
    expect(response.status).toBe(400);
    expect(response.body).toEqual({ success: false, message: 'contactId must not contain a NUL character (\\u0000)' });
  });

  test('in a query parameter that is input (GET /contacts answers its 400 as plain text)', async () => {
    const response = await service.request('GET', '/contacts', { apiKey: agency.apiKey, query: { email: 'a\u0000@example.com' } });
    expect(response.status).toBe(400);
    expect(response.contentType).toMatch(/^text\/plain/);
    expect(response.text).toBe('email must not contain a NUL character (\\u0000)');
  });

  test('in a body string and in an object key, on /v1; nothing is created', async () => {
    const before = await contactCount(agency.userId);
    const inValue = await service.request('POST', '/contacts', { apiKey: agency.apiKey, body: { phoneNumber: '+14155550170', firstName: 'Nul\u0000' } });
    expect(inValue.status).toBe(400);
    expect(inValue.body).toEqual(envelope('firstName must not contain a NUL character (\\u0000)'));
    const inKey = await service.request('POST', '/contacts', {
      apiKey: agency.apiKey,
      body: { phoneNumber: '+14155550171', currentCampaignData: { step: { 'k\u0000': 1 } } },
    });
    expect(inKey.status).toBe(400);
    expect(inKey.body).toEqual(envelope('A field name in currentCampaignData.step must not contain a NUL character (\\u0000)'));
    expect(await contactCount(agency.userId)).toBe(before);
  });

  test('on /trpc, as BAD_REQUEST with the same message', async () => {
    const response = await trpcPost('contacts.create', JSON.stringify({ phoneNumber: '+14155550172', lastName: 'x\u0000y' }));
    expect(response.status).toBe(400);
    expect(response.body.error).toMatchObject({ message: 'lastName must not contain a NUL character (\\u0000)', data: { code: 'BAD_REQUEST', httpStatus: 400 } });
    const viaQuery = await trpcPost('contacts.create', JSON.stringify({ phoneNumber: '+14155550173' }), '?userId=%00');
    expect(viaQuery.status).toBe(400);
    expect(viaQuery.body.error.message).toBe('userId must not contain a NUL character (\\u0000)');
  });
});

describe('text with a lone UTF-16 surrogate is 400, never a database error', () => {
  const loneSurrogate = (field: string) => `${field} must not contain a lone UTF-16 surrogate (\\ud800 to \\udfff without its pair)`;

  test('the rule: strings and object keys (a query string cannot carry one); a complete pair is text like any other', () => {
    expect(findInputProblem({ a: ['ok', 'a\ud800'] })?.message).toBe(loneSurrogate('a.1'));
    expect(findInputProblem({ a: { ['\udc00k']: 1 } })?.message).toBe(loneSurrogate('A field name in a'));
    expect(findInputProblem({ a: 'b\udfffc' })).toMatchObject({ status: 400, reason: 'lone_surrogate' });
    expect(findInputProblem({ a: 'smile \ud83d\ude00', ['\ud83d\ude00']: 'key' })).toBeUndefined();
    // A query string cannot carry one: URLSearchParams holds well-formed text, whatever the URL's bytes.
    expect(new URLSearchParams('note=x%ED%A0%80').get('note')).toBe('x\ufffd\ufffd\ufffd');
    expect(new URLSearchParams([['note', 'x\ud800']]).get('note')).toBe('x\ufffd');
    expect(() => checkRequestInput({ a: 'x\ud800' }, new URLSearchParams('note=y'))).toThrow(loneSurrogate('a'));
  });

  test('POST /v1/contacts with one in currentCampaignData is 400 naming the field; nothing is created', async () => {
    const before = await contactCount(agency.userId);
    const response = await service.request('POST', '/contacts', {
      apiKey: agency.apiKey,
      // JSON.stringify would escape it again; the escape in the JSON text is what decodes to a lone surrogate.
      rawBody: '{"phoneNumber":"+14155550174","currentCampaignData":{"a":"a\\ud800"}}',
      headers: { 'content-type': 'application/json' },
    });
    expect(response.status).toBe(400);
    expect(response.body).toEqual(envelope(loneSurrogate('currentCampaignData.a')));
    const inKey = await service.request('POST', '/contacts', {
      apiKey: agency.apiKey,
      rawBody: '{"phoneNumber":"+14155550175","currentCampaignData":{"\\udc00":1}}',
      headers: { 'content-type': 'application/json' },
    });
    expect(inKey.status).toBe(400);
    expect(inKey.body).toEqual(envelope(loneSurrogate('A field name in currentCampaignData')));
    expect(await contactCount(agency.userId)).toBe(before);
  });

  test('/trpc chatWidgets.create and update with one in settings are BAD_REQUEST naming the field', async () => {
    const created = await trpcPost('chatWidgets.create', '{"name":"Site","settings":{"welcome":"hi \\ud800"}}');
    expect(created.status).toBe(400);
    expect(created.body.error).toMatchObject({ message: loneSurrogate('settings.welcome'), data: { code: 'BAD_REQUEST', httpStatus: 400 } });
    const widget = await trpcPost('chatWidgets.create', '{"name":"Site","settings":{}}');
    expect(widget.status).toBe(200);
    const configId = (widget.body as unknown as { result: { data: { data: { id: string } } } }).result.data.data.id;
    const updated = await trpcPost('chatWidgets.update', `{"configId":"${configId}","settings":{"\\udfff":"x"}}`);
    expect(updated.status).toBe(400);
    expect(updated.body.error).toMatchObject({ message: loneSurrogate('A field name in settings'), data: { code: 'BAD_REQUEST' } });
  });

  test('a public chat-widget endpoint applies the same rule (POST /v1/incoming-chat-widget-message)', async () => {
    const response = await service.request('POST', '/incoming-chat-widget-message', {
      query: { userId: agency.userId },
      rawBody: '{"messageType":"text","customData":{"body":"hi \\ud800","fromId":"visitor-0001","toId":"cw_x"}}',
      headers: { 'content-type': 'application/json' },
    });
    expect(response.status).toBe(400);
    expect(response.body).toEqual({ error: loneSurrogate('customData.body') });
  });
});

describe(`JSON nested deeper than ${MAX_INPUT_DEPTH} levels is 400`, () => {
  const body = (levels: number) => `{"phoneNumber":"+14155550180","currentCampaignData":${nestedJson(levels)}}`;
  const tooDeep = envelope(`currentCampaignData nests objects or arrays deeper than ${MAX_INPUT_DEPTH} levels`);

  test(`exactly ${MAX_INPUT_DEPTH} levels (the body counts as one) is accepted`, async () => {
    const response = await service.request('POST', '/contacts', {
      apiKey: agency.apiKey,
      rawBody: body(MAX_INPUT_DEPTH - 1),
      headers: { 'content-type': 'application/json' },
    });
    expect(response.status).toBe(200);
  });

  test('one more level is refused on /v1', async () => {
    const response = await service.request('POST', '/contacts', {
      apiKey: agency.apiKey,
      rawBody: body(MAX_INPUT_DEPTH).replace('0180', '0181'),
      headers: { 'content-type': 'application/json' },
    });
    expect(response.status).toBe(400);
    expect(response.body).toEqual(tooDeep);
  });

  test('5,000 levels in currentCampaignData (POST /contacts) is 400, not a stack overflow, on /v1 and /trpc', async () => {
    const deep = `{"phoneNumber":"+14155550182","currentCampaignData":${'['.repeat(5000)}${']'.repeat(5000)}}`;
    const rest = await service.request('POST', '/contacts', { apiKey: agency.apiKey, rawBody: deep, headers: { 'content-type': 'application/json' } });
    expect(rest.status).toBe(400);
    expect(rest.body).toEqual(tooDeep);
    const trpc = await trpcPost('contacts.create', deep);
    expect(trpc.status).toBe(400);
    expect(trpc.body.error).toMatchObject({ message: tooDeep.error, data: { code: 'BAD_REQUEST' } });
    const lookup = await service.request('GET', '/contacts', { apiKey: agency.apiKey, query: { phoneNumber: '+14155550182' } });
    expect(lookup.status).toBe(404);
  });

  test('malformed JSON on /trpc is BAD_REQUEST with the same message as on /v1', async () => {
    const response = await trpcPost('contacts.create', '{"phoneNumber":');
    expect(response.status).toBe(400);
    expect(response.body.error.message).toBe('Request body is not valid JSON');
  });
});

describe(`integers beyond a PostgreSQL integer column (${INT32_MAX}) are 400`, () => {
  async function newClient(): Promise<string> {
    const response = await service.request('POST', '/sub-accounts', {
      apiKey: agency.apiKey,
      body: { email: `bounds-${Date.now()}-${Math.random()}@example.com`, first_name: 'Ina', last_name: 'Int', usage_limits: { monthly_credits: 10 } },
    });
    expect(response.status).toBe(201);
    return response.body.data.id;
  }

  test('PUT /sub-accounts/{id}/usage-limits: credits 2147483647 is stored, 2147483648 is refused and changes nothing', async () => {
    const id = await newClient();
    const largest = await service.request('PUT', `/sub-accounts/${id}/usage-limits`, { apiKey: agency.apiKey, body: { credits: INT32_MAX } });
    expect(largest.status).toBe(200);
    expect(largest.body.data.credits).toBe(INT32_MAX);
    const beyond = await service.request('PUT', `/sub-accounts/${id}/usage-limits`, { apiKey: agency.apiKey, body: { credits: INT32_MAX + 1, monthly_credits: 5 } });
    expect(beyond.status).toBe(400);
    expect(beyond.body).toEqual(envelope(`credits must be at most ${INT32_MAX}`));
    const after = await service.request('GET', `/sub-accounts/${id}`, { apiKey: agency.apiKey });
    expect(after.body.data.usage_limits).toMatchObject({ credits: INT32_MAX, monthly_credits: 10 });
  });

  test('POST /sub-accounts with usage_limits.monthly_credits 3000000000 is refused, naming the field and the bound', async () => {
    const response = await service.request('POST', '/sub-accounts', {
      apiKey: agency.apiKey,
      body: { email: `huge-${Date.now()}@example.com`, first_name: 'Ina', last_name: 'Int', usage_limits: { monthly_credits: 3_000_000_000 } },
    });
    expect(response.status).toBe(400);
    expect(response.body).toEqual(envelope(`usage_limits.monthly_credits: must be at most ${INT32_MAX}`));
  });

  test('on /trpc too', async () => {
    const id = await newClient();
    await expect(trpcClient().usage.updateSubAccount.mutate({ id, credits: INT32_MAX + 1 } as never)).rejects.toMatchObject({
      message: `credits must be at most ${INT32_MAX}`,
      data: { code: 'BAD_REQUEST', httpStatus: 400 },
    });
  });

  test('the OpenAPI document states the bound', async () => {
    const document = (await service.request('GET', '/openapi.json')).body;
    const schema = document.paths['/sub-accounts/{id}/usage-limits'].put.requestBody.content['application/json'].schema;
    expect(schema.properties.credits).toMatchObject({ type: 'integer', minimum: 0, maximum: INT32_MAX });
  });
});

type ZodNode = {
  _zod: { def: Record<string, unknown> & { type: string } };
  minValue?: number | null;
  maxValue?: number | null;
  isInt?: boolean;
};

/** Every integer leaf of a zod 4 schema whose range is wider than an int32, by path. */
function unboundedIntegers(schema: ZodNode, path: string, found: string[], seen = new Set<ZodNode>()): string[] {
  if (seen.has(schema)) return found;
  seen.add(schema);
  const def = schema._zod.def;
  const visit = (child: unknown, at: string) => child && unboundedIntegers(child as ZodNode, at, found, seen);
  switch (def.type) {
    case 'number':
    case 'int':
      if (schema.isInt && ((schema.minValue ?? -Infinity) < INT32_MIN || (schema.maxValue ?? Infinity) > INT32_MAX)) found.push(path);
      break;
    case 'bigint':
      found.push(path);
      break;
    case 'object':
      for (const [key, child] of Object.entries(def.shape as Record<string, unknown>)) visit(child, `${path}.${key}`);
      visit(def.catchall, `${path}.*`);
      break;
    case 'array':
      visit(def.element, `${path}[]`);
      break;
    case 'tuple':
      (def.items as unknown[]).forEach((item, index) => visit(item, `${path}[${index}]`));
      visit(def.rest, `${path}[]`);
      break;
    case 'record':
    case 'map':
      visit(def.valueType, `${path}.*`);
      break;
    case 'set':
      visit(def.valueType, `${path}[]`);
      break;
    case 'union':
      (def.options as unknown[]).forEach((option) => visit(option, path));
      break;
    case 'intersection':
      visit(def.left, path);
      visit(def.right, path);
      break;
    case 'pipe':
      visit(def.in, path);
      break;
    case 'lazy':
      visit((def.getter as () => unknown)(), path);
      break;
    default:
      // optional, nullable, default, prefault, readonly, catch, nonoptional, promise...
      visit(def.innerType, path);
  }
  return found;
}

test('every integer a procedure accepts is bounded to what an integer column holds (a new field cannot reintroduce the 500)', () => {
  const procedures = appRouter._def.procedures as unknown as Record<string, { _def: { inputs: ZodNode[] } }>;
  const unbounded: string[] = [];
  for (const [name, procedure] of Object.entries(procedures)) {
    for (const input of procedure._def.inputs) unboundedIntegers(input, name, unbounded);
  }
  expect(unbounded).toEqual([]);
  // The walk reaches integer leaves under wrappers and reports an unbounded one.
  const probe = z.object({ limits: z.object({ n: z.number().int().min(0).optional(), ok: z.int32() }).nullable() });
  expect(unboundedIntegers(probe as unknown as ZodNode, 'probe', [])).toEqual(['probe.limits.n']);
});
