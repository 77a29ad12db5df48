// Default-deny over the whole API: every procedure of appRouter, including the
// ones added after this test was written, refuses a scoped key outside its
// sections (403 key_scope_denied) and a read-only key on a write (403
// key_read_only), before it looks at its input. Every procedure that can act on
// a client account (through `userId`, an id in its input, or on every client, also
// when an input flag asks for it) refuses a key whose sub_account_ids do not cover
// that account; an input flag that needs another section refuses a key without it.
import { afterAll, beforeAll, expect, test } from 'vitest';
import { TRPCError } from '@trpc/server';
import { appRouter } from '../../routers/index.ts';
import { API_SECTIONS } from '../../server/auth/scopes.ts';
import { ApiError } from '../../server/errors.ts';
import { createCallerFactory, createContext, type ProcedureMeta } from '../../server/trpc.ts';
import { startTestService, type TestService } from '../helpers/service.ts';
import {
  covered,
  createProcedureWalk,
  flagged,
  inputOf,
  reachable,
  targeting,
  writes,
  type Grant,
  type Outcome,
  type ProcedureEntry,
  type Target,
  type Way,
} from './procedure-walk.ts';

let service: TestService;
beforeAll(async () => {
  service = await startTestService();
});
afterAll(async () => {
  await service?.stop();
});

const { keysFor, onClient, newClient, flagKeys } = createProcedureWalk(() => service);

async function callOverRest(meta: ProcedureMeta, apiKey: string, target: Target = {}): Promise<Outcome> {
  const openapi = meta.openapi!;
  let inPath = false;
  const path = openapi.path.replace(/\{(\w+)\}/g, (_, name: string) => {
    if (name !== target.field) return `dummy_${name}`;
    inPath = true;
    return encodeURIComponent(target.id!);
  });
  const hasBody = openapi.method === 'POST' || openapi.method === 'PUT' || openapi.method === 'PATCH';
  const named = target.field && !inPath ? { [target.field]: target.id } : {};
  // Flags are booleans: only a JSON body carries them as such.
  if (target.flags && !hasBody) throw new Error(`${openapi.method} ${openapi.path}: input flags need a body`);
  const response = await service.request(openapi.method, path, {
    apiKey,
    query: { userId: target.userId, ...(hasBody ? {} : named) },
    body: hasBody ? { ...named, ...target.flags } : undefined,
  });
  return { status: response.status, errorCode: response.body?.error_code, detail: `${openapi.method} ${openapi.path}: ${response.text}` };
}

/** Procedures without a REST path (subscriptions, tRPC-only) are called through tRPC itself. */
async function callOverTrpc(procedurePath: string, apiKey: string, target: Target = {}): Promise<Outcome> {
  const query = new URLSearchParams({ apiKey, ...(target.userId ? { userId: target.userId } : {}) });
  const caller = createCallerFactory(appRouter)(
    createContext(service.services, { method: 'POST', query, headers: {}, host: undefined, ip: '127.0.0.1' }),
  ) as unknown as Record<string, unknown>;
  const call = procedurePath.split('.').reduce<any>((node, segment) => node[segment], caller) as (input: unknown) => Promise<unknown>;
  try {
    const result = await call(inputOf(target));
    return { status: 200, errorCode: undefined, detail: `${procedurePath}: resolved ${String(result)}` };
  } catch (error) {
    const cause = error instanceof TRPCError && error.cause instanceof ApiError ? error.cause : null;
    return { status: cause?.status ?? 500, errorCode: cause?.code ?? cause?.status, detail: `${procedurePath}: ${String(error)}` };
  }
}

function call(procedurePath: string, meta: ProcedureMeta, apiKey: string, target?: Target): Promise<Outcome> {
  return meta.openapi ? callOverRest(meta, apiKey, target) : callOverTrpc(procedurePath, apiKey, target);
}

test('the walk covers the whole router (and every procedure declares a section and an access)', () => {
  const paths = covered.map(([path]) => path);
  expect(paths).toEqual(expect.arrayContaining(['apiKeys.create', 'apiKeys.current', 'lists.create', 'contacts.find']));
  for (const [path, procedure] of covered) {
    const meta = procedure._def.meta;
    expect(API_SECTIONS, `${path} section`).toContain(meta?.section);
    expect(['read', 'write'], `${path} access`).toContain(meta?.access);
  }
});

test.each(covered.map(([path, procedure]) => [path, procedure] as const))(
  '%s: a scoped key whose tags exclude its section gets 403 key_scope_denied',
  async (path, procedure) => {
    const meta = procedure._def.meta!;
    const { outsideSection } = await keysFor(meta.section);
    const outcome = await call(path, meta, outsideSection);
    expect(outcome.status, outcome.detail).toBe(403);
    expect(outcome.errorCode, outcome.detail).toBe('key_scope_denied');
  },
);

test.each(writes.map(([path, procedure]) => [path, procedure] as const))(
  '%s (write): a read-only key that includes its section gets 403 key_read_only',
  async (path, procedure) => {
    const meta = procedure._def.meta!;
    const { readOnlyInSection } = await keysFor(meta.section);
    const outcome = await call(path, meta, readOnlyInSection);
    // Key management stays closed to scoped keys whatever they are granted (rule 6).
    const expected = meta.section === 'API Keys' || meta.requires === 'owner' ? 'key_scope_denied' : 'key_read_only';
    expect(outcome.status, outcome.detail).toBe(403);
    expect(outcome.errorCode, outcome.detail).toBe(expected);
  },
);

test('the account walk covers userId, input ids and every-client operations (and every agency-only procedure names its target)', () => {
  const walked = targeting.map(([path, way]) => `${path}: ${way}`);
  expect(walked).toEqual(
    expect.arrayContaining([
      'lists.create: client SC1 as userId',
      'contacts.find: client SC1 as userId',
      'subAccounts.delete: client SC1 named in its input',
      'subAccounts.get: client SC1 named in its input',
      'usage.updateSubAccount: client SC1 named in its input',
      'subAccounts.create: every client',
      'subAccounts.list: every client',
      'webhooks.create: every client, by an input flag',
      'webhooks.update: every client, by an input flag',
    ]),
  );
  // Agency-only procedures refuse userId and act on client accounts, so their
  // meta must say which: otherwise no scope rule would reach those accounts.
  for (const [path, procedure] of reachable) {
    if (procedure._def.meta?.agencyOnly) expect(procedure._def.meta!.targetAccount, `${path} targetAccount`).toBeDefined();
  }
});

/** Calls the procedure on a client SC1 made for the call, with a key of the grant or the agency's main key. */
async function callOnClient(path: string, way: Way, procedure: ProcedureEntry, grant: Grant | 'main key'): Promise<Outcome> {
  const { apiKey, target } = await onClient(way, procedure, grant);
  return call(path, procedure._def.meta!, apiKey, target);
}

test.each(targeting.flatMap(([path, way, procedure]) => (['[]', '[other]'] as const).map((grant) => [path, way, grant, procedure] as const)))(
  '%s, %s: a key with sub_account_ids %s gets 403 key_scope_denied',
  async (path, way, grant, procedure) => {
    const outcome = await callOnClient(path, way, procedure, grant);
    expect(outcome.status, outcome.detail).toBe(403);
    expect(outcome.errorCode, outcome.detail).toBe('key_scope_denied');
  },
);

test.each(targeting.map(([path, way, procedure]) => [path, way, procedure] as const))(
  '%s, %s: a key with sub_account_ids ["*"] is not refused for its scopes',
  async (path, way, procedure) => {
    const outcome = await callOnClient(path, way, procedure, '["*"]');
    // The key's scopes let the call through: it gets the answer the agency's unscoped
    // main key gets for the same call on its own fresh client (200, or 400 for the empty
    // input, 404 for dummy ids), and that answer is the procedure's own, not an
    // authentication, rate-limit or server failure.
    const unscoped = await callOnClient(path, way, procedure, 'main key');
    expect({ status: outcome.status, errorCode: outcome.errorCode }, outcome.detail).toEqual({ status: unscoped.status, errorCode: unscoped.errorCode });
    expect([200, 201, 400, 403, 404], outcome.detail).toContain(outcome.status);
    // A 403 here can only be a domain refusal (numeric error_code), never a key-scope code.
    if (outcome.status === 403) expect(outcome.errorCode, outcome.detail).toBe(403);
  },
);

test('the flag walk covers every input flag that needs another section', () => {
  expect(flagged.map(([path]) => path)).toEqual(expect.arrayContaining(['webhooks.create']));
});

test.each(flagged.map(([path, procedure]) => [path, procedure] as const))(
  "%s with its flag set: a writable key of its section alone gets 403 key_scope_denied; with the flag's section too it is not refused",
  async (path, procedure) => {
    const meta = procedure._def.meta!;
    const rule = meta.sectionWhenSet!;
    const { ownSectionOnly, withFlagSection, mainKey } = await flagKeys(meta);
    const target: Target = { flags: { [rule.field]: true } };
    const refused = await call(path, meta, ownSectionOnly, target);
    expect(refused.status, refused.detail).toBe(403);
    expect(refused.errorCode, refused.detail).toBe('key_scope_denied');
    expect(refused.detail).toContain(`not allowed to use the ${rule.section} section`);
    // Let through, the call gets the procedure's own answer, as the unscoped main key does (400 for the bare input).
    const allowed = await call(path, meta, withFlagSection, target);
    const unscoped = await call(path, meta, mainKey, target);
    expect({ status: allowed.status, errorCode: allowed.errorCode }, allowed.detail).toEqual({ status: unscoped.status, errorCode: unscoped.errorCode });
    expect(allowed.errorCode, allowed.detail).not.toBe('key_scope_denied');
  },
);

// Key management is the account's own people's business: an agency's main key, which may
// act on a client through `userId` everywhere else, may not read, mint or revoke its keys.
const keyManagement = covered.filter(([, procedure]) => procedure._def.meta?.section === 'API Keys');

test('every key-management procedure refuses userId (its meta says ownAccountOnly)', () => {
  expect(keyManagement.map(([path]) => path)).toEqual(expect.arrayContaining(['apiKeys.current', 'apiKeys.usage', 'apiKeys.rotate', 'apiKeys.create', 'apiKeys.list']));
  for (const [path, procedure] of keyManagement) expect(procedure._def.meta!.ownAccountOnly, path).toBe(true);
});

test.each(keyManagement.map(([path, procedure]) => [path, procedure] as const))(
  "%s: the agency's main key with userId=<its client> gets 403; without userId it is let through",
  async (path, procedure) => {
    const meta = procedure._def.meta!;
    // An agency of its own: the call without userId may rotate or revoke its main key.
    const agency = await service.createAccount({ agency: true });
    const client = await newClient(agency.userId);
    const refused = await call(path, meta, agency.apiKey, { userId: client });
    expect(refused.status, refused.detail).toBe(403);
    expect(refused.errorCode, refused.detail).toBe(403);
    expect(refused.detail).toContain('userId cannot be used on key management endpoints');
    const own = await call(path, meta, agency.apiKey);
    // Anything else may follow (400 for the empty input, 404 for dummy ids).
    expect([401, 403], own.detail).not.toContain(own.status);
  },
);
