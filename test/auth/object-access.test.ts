// Object-level authorization over the whole router: every procedure that takes the id
// of an object is called with account A's id by other accounts (B's main key, B's
// scoped keys of every section, agency C's main key, C acting on one of its clients),
// over /v1 and over /trpc, and is never answered 2xx: "an object of another account is
// not found" (style.md), 403 where the spec or the route says so; A's objects are
// unchanged afterwards. Listings of other accounts never show A's ids. The cases come
// from appRouter: a procedure whose input names an id field the registry below does not
// know fails the test, naming the procedure and the field.
// (test/auth/every-procedure.test.ts covers the section and account scoping this builds on.)
import { fetch as undiciFetch } from 'undici';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { z } from 'zod';
import { appRouter } from '../../routers/index.ts';
import { createScopedKey } from '../../server/api-keys/create-scoped-key.ts';
import { API_SECTIONS, type ApiSection } from '../../server/auth/scopes.ts';
import type { ProcedureMeta } from '../../server/trpc.ts';
import { startFakeMessagingProvider, type FakeMessagingProvider } from '../helpers/fake-messaging-provider.ts';
import { insecureAgent, startTestService, type TestService } from '../helpers/service.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.ts';
import { MESSAGING_ALLOW_HOSTS } from '../messaging/send-template-fixtures.ts';
import {
  createOwnedObjects,
  createOwnObjects,
  identifiersOf,
  nextPhone,
  snapshotOf,
  type Missing,
  type Owned,
  type Resource,
} from './object-fixtures.ts';

type ProcedureEntry = { _def: { meta?: ProcedureMeta; type: 'query' | 'mutation' | 'subscription'; inputs: z.ZodType[] } };
const procedures = Object.entries(appRouter._def.procedures as unknown as Record<string, ProcedureEntry>);

// ---------------------------------------------------------------------------------
// The registry: what each id field of a procedure's input names.
// ---------------------------------------------------------------------------------

/** A field that names an object: the resource (by section where one name means several). */
type IdRule = { resource: Resource } | { bySection: Partial<Record<ApiSection, Resource>> } | { notAnObject: string };

const ID_FIELDS: Record<string, IdRule> = {
  contactId: { resource: 'contact' },
  listId: { resource: 'list' },
  listIds: { resource: 'list' },
  configId: { resource: 'chatWidget' },
  chatWidgetId: { resource: 'chatWidget' },
  whatsappTemplateId: { resource: 'template' },
  webhookId: { resource: 'webhook' },
  sub_account_ids: { resource: 'subAccount' },
  id: { bySection: { Tasks: 'task', Broadcasts: 'broadcast', 'Sub Accounts': 'subAccount', 'API Keys': 'scopedKey', Appointments: 'appointment' } },
  // A path parameter: /tags/{name}.
  name: { bySection: { Tags: 'tag' } },
  instagramId: { notAnObject: "the contact's Instagram id, stored as data" },
  externalId: { notAnObject: "the caller's own id for the contact, stored as data" },
  phone_number_id: { notAnObject: "the messaging provider's phone number id, stored with the connection" },
  business_account_id: { notAnObject: "the messaging provider's business account id, stored with the connection" },
  time_zone_id: { notAnObject: 'a time zone name (IANA), stored as data' },
  widgetId: { resource: 'chatWidget' },
};

/**
 * Fields that look a contact up by its phone number or e-mail: another account's
 * contact's number is not found there either. Every other procedure with such a field
 * stores it as data (`NATURAL_KEYS_AS_DATA`).
 */
const CONTACT_LOOKUPS: Record<string, string[]> = {
  'contacts.find': ['phoneNumber', 'email'],
  'tags.assign': ['phoneNumber', 'email'],
  'summaries.request': ['phoneNumber', 'email'],
};
const NATURAL_KEYS_AS_DATA: Record<string, string> = {
  'contacts.create': "the new contact's own number and address (another account may have the same)",
  'contacts.update': 'the new e-mail address of the contact',
  'subAccounts.create': "the new client account's e-mail",
  'subAccounts.update': "the client account's new e-mail",
};

/**
 * Mutations without any id: they act on the caller's own account only, so there is no
 * other account's object to name.
 */
const OWN_ACCOUNT_ONLY: Record<string, string> = {
  'apiKeys.rotate': "replaces the caller's own main key",
  'apiKeys.revokeCurrent': "revokes the caller's own main key",
  'lists.create': 'creates a list in the selected account',
  'subAccounts.create': "creates a client of the caller's own agency",
  'webhooks.create': 'creates a subscription in the selected account',
  'messaging.connect': "stores the selected account's own provider credentials",
  'messaging.disconnect': "removes the selected account's own provider credentials",
  'templates.sync': "reads the selected account's own templates from its provider",
  'chatWidgets.create': 'creates a widget in the selected account',
};

/**
 * Subscriptions are not request/response calls: they stream the caller's own account's
 * events, filtered by what the input names (a foreign id only narrows that to nothing).
 */
const SUBSCRIPTIONS: Record<string, string> = {
  'chatWidgets.onConversationEvent':
    "streams only the selected account's events (stream-conversation-events.ts filters by account first); test/realtime/trpc-subscription.test.ts shows another account's never arrive",
};

/** What a listing needs to list (rather than look one thing up). */
const LISTING_INPUT: Record<string, Record<string, unknown>> = {
  'contacts.find': { limit: 100 },
};

/** Procedures without credentials (Authentication rule 9): visitors are identified by widget and visitor ids, not keys. */
function isPublic(meta: ProcedureMeta | undefined): boolean {
  return meta?.openapi?.protect === false;
}

// ---------------------------------------------------------------------------------
// What each procedure's input names.
// ---------------------------------------------------------------------------------

type Field = { path: string[]; name: string; isArray: boolean };

const ID_NAME = /^id$|Ids?$|_ids?$/;

function inputSchemaOf(procedure: ProcedureEntry): Record<string, any> {
  const merged: Record<string, any> = { properties: {}, required: [] };
  for (const input of procedure._def.inputs ?? []) {
    const schema = z.toJSONSchema(input, { unrepresentable: 'any', io: 'input' }) as Record<string, any>;
    Object.assign(merged.properties, schema.properties ?? {});
    merged.required.push(...(schema.required ?? []));
  }
  return merged;
}

function fieldsOf(schema: Record<string, any>, prefix: string[] = []): Field[] {
  const fields: Field[] = [];
  for (const [name, property] of Object.entries<Record<string, any>>(schema.properties ?? {})) {
    const variants = [property, ...(property.anyOf ?? []), ...(property.oneOf ?? [])];
    const isArray = variants.some((variant) => variant.type === 'array');
    fields.push({ path: [...prefix, name], name, isArray });
    for (const variant of variants) if (variant.type === 'object') fields.push(...fieldsOf(variant, [...prefix, name]));
  }
  return fields;
}

function pathParamsOf(meta: ProcedureMeta | undefined): string[] {
  return [...(meta?.openapi?.path ?? '').matchAll(/\{(\w+)\}/g)].map((match) => match[1]!);
}

type IdField = Field & { resource: Resource };
type Described = { path: string; procedure: ProcedureEntry; meta: ProcedureMeta; idFields: IdField[]; allFields: Field[]; unknown: string[] };

function describeProcedure(path: string, procedure: ProcedureEntry): Described {
  const meta = procedure._def.meta!;
  const allFields = fieldsOf(inputSchemaOf(procedure));
  const params = pathParamsOf(meta);
  const named = allFields.filter((field) => ID_NAME.test(field.name) || (field.path.length === 1 && params.includes(field.name)));
  for (const param of params) if (!allFields.some((field) => field.name === param)) named.push({ path: [param], name: param, isArray: false });
  const idFields: IdField[] = [];
  const unknown: string[] = [];
  for (const field of named) {
    const rule = ID_FIELDS[field.name];
    if (!rule) {
      unknown.push(field.path.join('.'));
      continue;
    }
    if ('notAnObject' in rule) continue;
    const resource = 'resource' in rule ? rule.resource : rule.bySection[meta.section];
    if (!resource) unknown.push(`${field.path.join('.')} (section ${meta.section})`);
    else idFields.push({ ...field, resource });
  }
  return { path, procedure, meta, idFields, allFields, unknown };
}

const described = procedures.filter(([, procedure]) => !isPublic(procedure._def.meta) && procedure._def.type !== 'subscription').map(([path, procedure]) => describeProcedure(path, procedure));
const byPath = new Map(described.map((entry) => [entry.path, entry]));

// ---------------------------------------------------------------------------------
// The service, account A's objects, and the other accounts.
// ---------------------------------------------------------------------------------

let service: TestService;
let receiver: WebhookReceiver;
let fake: FakeMessagingProvider;

type Caller = {
  label: string;
  apiKey: string;
  userId?: string;
  /** The section a scoped key was granted; 'all' for `tags: []`; undefined for a main key. */
  section?: ApiSection | 'all';
  /** The caller's own objects, in the account it acts on. */
  own: Awaited<ReturnType<typeof createOwnObjects>>;
};

type Transport = 'rest' | 'trpc';
const TRANSPORTS: Transport[] = ['rest', 'trpc'];
const GRANTABLE: ApiSection[] = API_SECTIONS.filter((section) => section !== 'API Keys');

/** Each transport gets its own accounts B and C, so neither goes past its account's 1,200 requests a minute. */
type Others = { b: { main: Caller; scoped: Map<ApiSection | 'all', Caller> }; cMain: Caller; cAsClient: Caller };

let a: { userId: string; apiKey: string };
let aObjects: Owned;
/** A's client: what an agency reaches with `userId`, and what no other agency reaches. */
let aClient: { userId: string; objects: Owned };
const others = {} as Record<Transport, Others>;
let forbidden: string[];
let baseline: Record<string, unknown>;
let receivedBefore: number;

async function otherAccounts(transport: Transport): Promise<Others> {
  const b = await service.createAccount({ agency: true });
  const bOwn = await createOwnObjects(service, b.userId, { apiKey: b.apiKey });
  const scoped = new Map<ApiSection | 'all', Caller>();
  for (const section of [...GRANTABLE, 'all' as const]) {
    const apiKey = await service.createScopedKey(b.userId, {
      tags: section === 'all' ? [] : [section],
      read_only: false,
      sub_account_ids: ['*'],
      rate_limit_per_min: 300,
    });
    scoped.set(section, { label: `B's scoped key (${section === 'all' ? 'every section' : section})`, apiKey, section, own: bOwn });
  }
  const c = await service.createAccount({ agency: true });
  const cOwn = await createOwnObjects(service, c.userId, { apiKey: c.apiKey });
  const client = await service.request('POST', '/v1/sub-accounts', {
    apiKey: c.apiKey,
    body: { email: `c-client-${transport}-${process.pid}@example.com`, first_name: 'C', last_name: 'Client', usage_limits: { monthly_credits: 1000 } },
  });
  expect(client.status, client.text).toBe(201);
  const clientId = client.body.data.id;
  const clientOwn = await createOwnObjects(service, clientId, { apiKey: c.apiKey, userId: clientId });
  return {
    b: { main: { label: "B's main key", apiKey: b.apiKey, own: bOwn }, scoped },
    cMain: { label: "agency C's main key", apiKey: c.apiKey, own: cOwn },
    cAsClient: { label: "agency C acting on its client (userId)", apiKey: c.apiKey, userId: clientId, own: clientOwn },
  };
}

beforeAll(async () => {
  receiver = await startWebhookReceiver();
  fake = await startFakeMessagingProvider();
  service = await startTestService({
    env: { ...MESSAGING_ALLOW_HOSTS, MESSAGING_API_URL: fake.url, BROADCAST_RATE_PER_SECOND: '200' },
  });
  a = await service.createAccount({ agency: true });
  const clientResponse = await service.request('POST', '/v1/sub-accounts', {
    apiKey: a.apiKey,
    body: { email: `a-client-${process.pid}@example.com`, first_name: 'A', last_name: 'Client', usage_limits: { monthly_credits: 1000 } },
  });
  expect(clientResponse.status, clientResponse.text).toBe(201);
  const clientId = clientResponse.body.data.id;
  const [objects, clientObjects, rest, trpc] = await Promise.all([
    createOwnedObjects(service, a.userId, { apiKey: a.apiKey }, { webhookUrl: receiver.url, phoneNumberId: 'oa-a', fake }),
    createOwnedObjects(service, clientId, { apiKey: a.apiKey, userId: clientId }, { webhookUrl: receiver.url, phoneNumberId: 'oa-a-client', fake }),
    otherAccounts('rest'),
    otherAccounts('trpc'),
  ]);
  aObjects = objects;
  aClient = { userId: clientId, objects: clientObjects };
  others.rest = rest;
  others.trpc = trpc;
  forbidden = [...identifiersOf(aObjects), ...identifiersOf(aClient.objects)];
  baseline = await snapshotOf(service, [a.userId, clientId]);
  receivedBefore = receiver.requests.length;
}, 120_000);

afterAll(async () => {
  await service?.stop();
  await receiver?.close();
  await fake?.close();
});

// ---------------------------------------------------------------------------------
// Calling a procedure over /v1 and over /trpc.
// ---------------------------------------------------------------------------------

type Outcome = { status: number; errorCode: unknown; text: string; detail: string };

async function callRest(meta: ProcedureMeta, caller: { apiKey: string; userId?: string }, input: Record<string, unknown>): Promise<Outcome> {
  const { method, path: template } = meta.openapi!;
  const rest = { ...input };
  const path = template.replace(/\{(\w+)\}/g, (_, name: string) => {
    const value = rest[name];
    delete rest[name];
    return encodeURIComponent(String(value ?? `missing_${name}`));
  });
  const hasBody = method === 'POST' || method === 'PUT' || method === 'PATCH';
  const response = await service.request(method, `/v1${path}`, {
    apiKey: caller.apiKey,
    query: { userId: caller.userId, ...(hasBody ? {} : (rest as Record<string, string>)) },
    body: hasBody ? rest : undefined,
  });
  return { status: response.status, errorCode: response.body?.error_code, text: response.text, detail: `${method} /v1${path} -> ${response.status} ${response.text.slice(0, 300)}` };
}

async function callTrpc(path: string, type: 'query' | 'mutation' | 'subscription', caller: { apiKey: string; userId?: string }, input: Record<string, unknown>): Promise<Outcome> {
  const url = new URL(`${service.origin}/trpc/${path}`);
  if (caller.userId) url.searchParams.set('userId', caller.userId);
  const headers: Record<string, string> = { 'x-api-key': caller.apiKey };
  let body: string | undefined;
  if (type === 'query') url.searchParams.set('input', JSON.stringify(input));
  else {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(input);
  }
  const response = await undiciFetch(url, { method: type === 'query' ? 'GET' : 'POST', headers, body, dispatcher: insecureAgent });
  const text = await response.text();
  let errorCode: unknown;
  try {
    errorCode = JSON.parse(text)?.error?.data?.error_code;
  } catch {
    errorCode = undefined;
  }
  return { status: response.status, errorCode, text, detail: `trpc ${type} ${path} -> ${response.status} ${text.slice(0, 300)}` };
}

function call(transport: Transport, entry: Described, caller: { apiKey: string; userId?: string }, input: Record<string, unknown>): Promise<Outcome> {
  if (transport === 'rest' && entry.meta.openapi) return callRest(entry.meta, caller, input);
  return callTrpc(entry.path, entry.procedure._def.type, caller, input);
}

/** Runs `work` over `items`, `limit` at a time. */
async function pooled<T, R>(items: T[], limit: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) {
        const index = next++;
        results[index] = await work(items[index]!);
      }
    }),
  );
  return results;
}

// ---------------------------------------------------------------------------------
// The cases.
// ---------------------------------------------------------------------------------

/** A's value for an id field: how the field names the object (webhooks: by name and by position). */
type Variant = { label: string; value: (owned: Owned) => string };

function variantsOf(resource: Resource): Variant[] {
  const widget = (owned: Owned) => {
    if ('missing' in owned.chatWidget) throw new Error((owned.chatWidget as Missing).missing);
    return owned.chatWidget.id;
  };
  switch (resource) {
    case 'contact':
      return [{ label: 'id', value: (owned) => owned.contact.id }];
    case 'list':
      return [{ label: 'id', value: (owned) => owned.list.id }];
    case 'tag':
      return [{ label: 'name', value: (owned) => owned.tag.name }];
    case 'task':
      return [{ label: 'id', value: (owned) => owned.task.id }];
    case 'chatWidget':
      return [{ label: 'configId', value: widget }];
    case 'webhook':
      return [
        { label: 'name', value: (owned) => owned.webhook!.name },
        // Positions are per account (find-subscription.ts): A has two, the callers none.
        { label: 'position', value: (owned) => owned.webhook!.position },
      ];
    case 'scopedKey':
      return [{ label: 'key_ id', value: (owned) => owned.scopedKey.id }];
    case 'subAccount':
      return [{ label: "A's client's userId", value: () => aClient.userId }];
    case 'template':
      return [{ label: 'id', value: (owned) => owned.template.id }];
    case 'broadcast':
      return [{ label: 'id', value: (owned) => owned.broadcast!.id }];
    case 'appointment':
      return [{ label: 'id', value: (owned) => owned.appointment.id }];
  }
}

/** The caller's own value for an id field that is not the one under test. */
function ownValue(field: IdField, caller: Caller): unknown {
  const own = caller.own;
  const value = (() => {
    switch (field.resource) {
      case 'contact':
        return own.contact.id;
      case 'list':
        return own.list.id;
      case 'task':
        return own.task.id;
      case 'appointment':
        return own.appointment.id;
      case 'template':
        return own.template.id;
      case 'scopedKey':
        return own.scopedKey.id;
      default:
        throw new Error(`no own ${field.resource} for the callers; add one to createOwnObjects`);
    }
  })();
  return field.isArray ? [value] : value;
}

/** The rest of a valid input, beyond the ids: what each procedure needs to get to its lookup. */
const OTHER_INPUT: Record<string, () => Record<string, unknown>> = {
  'contacts.create': () => ({ phoneNumber: nextPhone() }),
  'contacts.update': () => ({ firstName: 'Mallory' }),
  'lists.update': () => ({ name: 'taken over' }),
  'tasks.create': () => ({ title: 'spy' }),
  'tasks.update': () => ({ title: 'taken over' }),
  'appointments.book': () => ({ starts_at: '2030-01-01T09:00:00Z', title: 'spy' }),
  'messages.typing': () => ({ typing: true }),
  'messages.reply': () => ({ text: 'spy' }),
  'tags.assign': () => ({ tag: 'spied-on' }),
  'subAccounts.update': () => ({ first_name: 'Mallory' }),
  'usage.updateSubAccount': () => ({ credits: 999_999 }),
  'webhooks.update': () => ({ name: 'taken-over' }),
  'webhooks.replay': () => ({ since: new Date(Date.now() - 3_600_000).toISOString() }),
  'chatWidgets.update': () => ({ name: 'taken over' }),
  'apiKeys.update': () => ({ label: 'taken over' }),
};

/** Procedures whose id fields are each sent on their own. */
const SENT_ALONE: Record<string, string> = {
  'contacts.create': 'listIds wins over listId, and a contact needs neither a list nor a widget',
};

function setAt(target: Record<string, unknown>, path: string[], value: unknown): void {
  let node = target;
  for (const segment of path.slice(0, -1)) node = (node[segment] ??= {}) as Record<string, unknown>;
  node[path[path.length - 1]!] = value;
}

/** What the answer must be when the procedure itself lets the caller through: most are "not found". */
const EXPECTED_FOR_FIELD: Record<string, { status: number; why: string }> = {
  'contacts.create listId': { status: 403, why: 'spec, POST /contacts: 403 no permission to add to a list' },
  'contacts.create listIds': { status: 403, why: 'spec, POST /contacts: 403 no permission to add to a list' },
  'contacts.addToList listId': { status: 403, why: 'spec, POST /contacts/lists: 403 (no permission)' },
  'contacts.removeFromList listId': { status: 403, why: 'spec, DELETE /contacts/lists: 403 (no permission)' },
  'apiKeys.create scopes.sub_account_ids': { status: 400, why: 'a grant its owner could not give is refused as invalid input' },
  'apiKeys.update scopes.sub_account_ids': { status: 400, why: 'a grant its owner could not give is refused as invalid input' },
};

type Expected = { status: number; errorCode?: string; why: string };

function expectedFor(entry: Described, caseKey: string, caller: Caller): Expected {
  const meta = entry.meta;
  if (caller.section) {
    if (meta.section === 'API Keys' || meta.requires === 'owner') return { status: 403, errorCode: 'key_scope_denied', why: 'key management needs the main key (rule 6)' };
    if (caller.section !== 'all' && caller.section !== meta.section) return { status: 403, errorCode: 'key_scope_denied', why: 'outside the key\'s sections (rule 4)' };
  }
  if (caller.userId && meta.agencyOnly) return { status: 403, why: 'agency-only endpoints refuse userId (contract)' };
  if (caller.userId && meta.ownAccountOnly) return { status: 403, why: 'key management refuses userId: an agency never manages its clients\' keys' };
  return EXPECTED_FOR_FIELD[caseKey] ?? { status: 404, why: 'an object of another account is not found' };
}

type Case = { key: string; entry: Described; field: IdField; variant: Variant };

function casesOf(entry: Described): Case[] {
  const cases: Case[] = [];
  for (const field of entry.idFields) {
    for (const variant of variantsOf(field.resource)) cases.push({ key: `${entry.path} ${field.path.join('.')}`, entry, field, variant });
  }
  for (const name of CONTACT_LOOKUPS[entry.path] ?? []) {
    const variant: Variant = { label: name, value: (owned) => (name === 'email' ? owned.contact.email : owned.contact.phoneNumber) };
    cases.push({ key: `${entry.path} ${name}`, entry, field: { path: [name], name, isArray: false, resource: 'contact' }, variant });
  }
  return cases;
}

function inputFor(testCase: Case, caller: Caller, owned: Owned): Record<string, unknown> {
  const input: Record<string, unknown> = { ...OTHER_INPUT[testCase.entry.path]?.() };
  for (const field of testCase.entry.idFields) {
    if (field.path.join('.') === testCase.field.path.join('.')) continue;
    // Nested ids (a key's grant) and the references a create may go without are left out.
    if (field.path.length > 1 || SENT_ALONE[testCase.entry.path]) continue;
    setAt(input, field.path, ownValue(field, caller));
  }
  const value = testCase.variant.value(owned);
  setAt(input, testCase.field.path, testCase.field.isArray ? [value] : value);
  return input;
}

/** The callers of one transport; B's keys of the sections other than the procedure's are shared out between transports. */
function callersFor(transport: Transport, entry: Described): Caller[] {
  const set = others[transport];
  const outside = GRANTABLE.filter((section) => section !== entry.meta.section).filter((_, index) => index % 2 === TRANSPORTS.indexOf(transport));
  const sections: (ApiSection | 'all')[] = [...(GRANTABLE.includes(entry.meta.section) ? [entry.meta.section] : []), 'all', ...outside];
  return [set.b.main, ...sections.map((section) => set.b.scoped.get(section)!), set.cMain, set.cAsClient];
}

const cases = described.flatMap(casesOf);

describe('the registry covers the router', () => {
  test('every id field of every procedure is known to the registry', () => {
    const unknown = described.flatMap((entry) => entry.unknown.map((field) => `${entry.path}: input field "${field}" names an id the registry (ID_FIELDS) does not know`));
    expect(unknown).toEqual([]);
  });

  test('every subscription is listed with why it needs no matrix', () => {
    const subscriptions = procedures.filter(([, procedure]) => procedure._def.type === 'subscription').map(([path]) => path);
    expect(subscriptions.sort()).toEqual(Object.keys(SUBSCRIPTIONS).sort());
  });

  test('every phone number or e-mail field is either a contact lookup (a case) or data', () => {
    const unclassified = described
      .filter((entry) => entry.allFields.some((field) => field.path.length === 1 && (field.name === 'phoneNumber' || field.name === 'email')))
      .map((entry) => entry.path)
      .filter((path) => !CONTACT_LOOKUPS[path] && !NATURAL_KEYS_AS_DATA[path]);
    expect(unclassified).toEqual([]);
  });

  test('every mutation without an id is listed as acting on its own account only, and the lists name no stale procedure', () => {
    const withoutIds = described.filter((entry) => entry.procedure._def.type === 'mutation' && entry.idFields.length === 0 && !CONTACT_LOOKUPS[entry.path]);
    expect(withoutIds.map((entry) => entry.path).sort()).toEqual(Object.keys(OWN_ACCOUNT_ONLY).sort());
    const known = new Set(described.map((entry) => entry.path));
    const stale = [...Object.keys(SENT_ALONE), ...Object.keys(LISTING_INPUT), ...Object.keys(CONTACT_LOOKUPS), ...Object.keys(NATURAL_KEYS_AS_DATA), ...Object.keys(OTHER_INPUT)].filter((path) => !known.has(path));
    expect(stale).toEqual([]);
  });

  test('the cases include the ones this test was written for', () => {
    const keys = new Set(cases.map((testCase) => testCase.key));
    for (const key of ['contacts.update contactId', 'contacts.addToList listId', 'lists.delete listId', 'tasks.update contactId', 'tags.get name', 'webhooks.signingSecret webhookId', 'templates.send whatsappTemplateId', 'broadcasts.get id', 'subAccounts.delete id', 'apiKeys.revoke id', 'chatWidgets.otp configId', 'contacts.create chatWidgetId']) {
      expect(keys, key).toContain(key);
    }
  });
});

describe.each(TRANSPORTS)("another account's calls with account A's ids (%s)", (transport) => {
  test.each(cases.map((testCase) => [`${testCase.key} (${testCase.variant.label})`, testCase] as const))('%s', async (_, testCase) => {
    const entry = testCase.entry;
    const callers = callersFor(transport, entry);
    const outcomes = await pooled(callers, 6, async (caller) => {
      const expected = expectedFor(entry, testCase.key, caller);
      const outcome = await call(transport, entry, caller, inputFor(testCase, caller, aObjects));
      return { caller, expected, outcome };
    });
    const wrong = outcomes
      .filter(({ expected, outcome }) => outcome.status !== expected.status || (expected.errorCode !== undefined && outcome.errorCode !== expected.errorCode))
      .map(({ caller, expected, outcome }) => `${caller.label}: expected ${expected.status}${expected.errorCode ? ` ${expected.errorCode}` : ''} (${expected.why}); got ${outcome.detail}`);
    expect(wrong).toEqual([]);
    // Nothing of A's changed (for deletes: it is still there), nor was sent to A's webhook.
    expect(await snapshotOf(service, [a.userId, aClient.userId])).toEqual(baseline);
    expect(receiver.requests.length).toBe(receivedBefore);
  });
});

// ---------------------------------------------------------------------------------
// Listings: reads without ids never show A's objects to another account.
// ---------------------------------------------------------------------------------

const listings = described.filter((entry) => entry.procedure._def.type === 'query' && entry.idFields.length === 0);
const listingInput = (entry: Described) => ({ ...LISTING_INPUT[entry.path] });

describe.each(TRANSPORTS)("listings of other accounts never contain A's ids (%s)", (transport) => {
  test.each(listings.map((entry) => [entry.path, entry] as const))('%s', async (_, entry) => {
    const set = others[transport];
    const callers = [set.b.main, set.b.scoped.get('all')!, set.cMain, set.cAsClient];
    const outcomes = await pooled(callers, 4, async (caller) => ({ caller, outcome: await call(transport, entry, caller, listingInput(entry)) }));
    for (const { caller, outcome } of outcomes) {
      const shown = forbidden.filter((id) => outcome.text.includes(id));
      expect(shown, `${caller.label}: ${outcome.detail}`).toEqual([]);
    }
    // The main keys really listed (a refusal would show nothing either).
    const mainAnswer = outcomes.find(({ caller }) => caller === set.b.main)!.outcome;
    expect(mainAnswer.status, mainAnswer.detail).toBeLessThan(300);
  });
});

test("A's own listings do show A's ids, so the search above can find them", async () => {
  const shownToA = await pooled(listings, 4, async (entry) => {
    const outcome = await call('rest', entry, { apiKey: a.apiKey }, listingInput(entry));
    return forbidden.some((id) => outcome.text.includes(id)) ? entry.path : null;
  });
  expect(shownToA).toEqual(
    expect.arrayContaining(['lists.list', 'contacts.find', 'tasks.list', 'tags.list', 'chatSessions.recent', 'webhooks.list', 'templates.list', 'broadcasts.list', 'subAccounts.list', 'apiKeys.list', 'chatWidgets.list']),
  );
});

// ---------------------------------------------------------------------------------
// Agencies: A reaches its client's objects with userId; agency C does not (403).
// ---------------------------------------------------------------------------------

/** One read per resource of A's client, and how A's answer shows the object. */
const CLIENT_READS: Array<{ resource: string; procedure: string; input: (owned: Owned) => Record<string, unknown>; shows: (owned: Owned) => string }> = [
  { resource: 'contact', procedure: 'tags.ofContact', input: (o) => ({ contactId: o.contact.id }), shows: (o) => o.tag.name },
  { resource: 'chat session', procedure: 'chatSessions.listForContact', input: (o) => ({ contactId: o.contact.id }), shows: (o) => o.chatSessionIds[0]! },
  { resource: 'summary', procedure: 'summaries.listForContact', input: (o) => ({ contactId: o.contact.id }), shows: (o) => o.summaryIds[0]! },
  { resource: 'list', procedure: 'lists.get', input: (o) => ({ listId: o.list.id }), shows: (o) => o.list.id },
  { resource: 'tag', procedure: 'tags.get', input: (o) => ({ name: o.tag.name }), shows: (o) => o.tag.name },
  { resource: 'task', procedure: 'tasks.get', input: (o) => ({ id: o.task.id }), shows: (o) => o.task.id },
  { resource: 'appointment', procedure: 'appointments.listForContact', input: (o) => ({ contactId: o.contact.id }), shows: (o) => o.appointment.id },
  { resource: 'chat widget', procedure: 'chatWidgets.get', input: (o) => ({ configId: 'id' in o.chatWidget ? o.chatWidget.id : 'missing' }), shows: (o) => ('id' in o.chatWidget ? o.chatWidget.id : 'missing') },
  { resource: 'webhook', procedure: 'webhooks.list', input: () => ({}), shows: (o) => o.webhook!.name },
  { resource: 'webhook delivery', procedure: 'webhooks.deliveries', input: (o) => ({ webhookId: o.webhook!.name }), shows: (o) => o.webhook!.deliveryIds[0]! },
  { resource: 'scoped key', procedure: 'apiKeys.list', input: () => ({}), shows: (o) => o.scopedKey.id },
  { resource: 'template', procedure: 'templates.list', input: () => ({}), shows: (o) => o.template.id },
  { resource: 'broadcast', procedure: 'broadcasts.get', input: (o) => ({ id: o.broadcast!.id }), shows: (o) => o.broadcast!.id },
];

describe.each(TRANSPORTS)("an agency reaches its client's objects, another agency does not (%s)", (transport) => {
  test.each(CLIENT_READS.map((read) => [read.resource, read] as const))('%s', async (_, read) => {
    const entry = byPath.get(read.procedure);
    expect(entry, `${read.procedure} is not in appRouter`).toBeDefined();
    if (read.resource === 'chat widget' && 'missing' in aClient.objects.chatWidget) throw new Error(aClient.objects.chatWidget.missing);
    const input = read.input(aClient.objects);
    const byA = await call(transport, entry!, { apiKey: a.apiKey, userId: aClient.userId }, input);
    if (entry!.meta.ownAccountOnly) {
      // Key management is the client's own people's business: its own agency is refused too.
      expect(byA.status, byA.detail).toBe(403);
      expect(byA.text).not.toContain(read.shows(aClient.objects));
    } else {
      expect(byA.status, byA.detail).toBe(200);
      expect(byA.text).toContain(read.shows(aClient.objects));
    }
    const byC = await call(transport, entry!, { apiKey: others[transport].cMain.apiKey, userId: aClient.userId }, input);
    expect(byC.status, byC.detail).toBe(403);
    expect(byC.text).not.toContain(read.shows(aClient.objects));
  });
});

test("A's objects read through the API as A are still there after everything above", async () => {
  for (const read of CLIENT_READS.filter((entry) => !entry.procedure.endsWith('.list'))) {
    if (read.resource === 'chat widget' && 'missing' in aObjects.chatWidget) continue;
    const outcome = await call('rest', byPath.get(read.procedure)!, { apiKey: a.apiKey }, read.input(aObjects));
    expect(outcome.status, outcome.detail).toBe(200);
    expect(outcome.text).toContain(read.shows(aObjects));
  }
  const client = await service.request('GET', `/v1/sub-accounts/${aClient.userId}`, { apiKey: a.apiKey });
  expect(client.status, client.text).toBe(200);
});

// Public widget procedures carry no key (rule 9); the one that names an account does so
// with `userId`, and another account's widget is not found under it. Runs last: the
// control message adds a visitor contact to A.
test("a visitor message naming A's widget under B's userId is not found (POST /incoming-chat-widget-message)", async () => {
  expect(procedures.map(([path]) => path), 'the public incoming-message procedure is served').toContain('chatWidgetPublic.incomingMessage');
  if ('missing' in aObjects.chatWidget) throw new Error(aObjects.chatWidget.missing);
  const message = (visitor: string) => ({ customData: { body: 'hello there', fromId: visitor, toId: (aObjects.chatWidget as { id: string }).id }, messageType: 'text' });
  const underB = await service.request('POST', '/v1/incoming-chat-widget-message', { query: { userId: others.rest.b.main.own.accountId }, body: message('visitor-oa-b') });
  expect(underB.status, underB.text).toBe(404);
  expect(await snapshotOf(service, [a.userId, aClient.userId])).toEqual(baseline);
  const underA = await service.request('POST', '/v1/incoming-chat-widget-message', { query: { userId: a.userId }, body: message('visitor-oa-a') });
  expect(underA.status, underA.text).toBe(200);
});
