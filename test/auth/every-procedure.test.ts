// Default-deny over the whole API: every procedure of appRouter, including the
// ones added after this test was written, refuses a scoped key outside its
// sections (403 key_scope_denied) and a read-only key on a write (403
// key_read_only), before it looks at its input. Every procedure that can act on
// a client account (through `userId`, an id in its input, or on every client)
// refuses a key whose sub_account_ids do not cover that account.
import { afterAll, beforeAll, expect, test } from 'vitest';
import { TRPCError } from '@trpc/server';
import { appRouter } from '../../routers/index.ts';
import { createScopedKey } from '../../server/api-keys/scoped-keys.ts';
import { createSubAccount } from '../../server/sub-accounts/sub-accounts.ts';
import { API_SECTIONS, type ApiSection } from '../../server/auth/scopes.ts';
import { ApiError } from '../../server/errors.ts';
import { createCallerFactory, createContext, type ProcedureMeta } from '../../server/trpc.ts';
import { startTestService, type TestService } from '../helpers/service.ts';

type ProcedureEntry = { _def: { meta?: ProcedureMeta; type: 'query' | 'mutation' | 'subscription' } };
const procedures = Object.entries(appRouter._def.procedures as unknown as Record<string, ProcedureEntry>);

let service: TestService;
beforeAll(async () => {
  service = await startTestService();
});
afterAll(async () => {
  await service?.stop();
});

type SectionKeys = {
  outsideSection: string;
  readOnlyInSection: string;
  agencyId: string;
  /** Writable keys of the section, by the sub_account_ids they were granted. */
  byGrant: Record<Grant, string>;
};
type Grant = '[]' | '[other]' | '["*"]';
const GRANTS: Grant[] = ['[]', '[other]', '["*"]'];

let clientCounter = 0;
async function newClient(agencyId: string): Promise<string> {
  clientCounter += 1;
  const created = await createSubAccount(service.services.orm.em.fork(), agencyId, {
    email: `walk-client${clientCounter}-${process.pid}-${Date.now()}@example.com`,
    first_name: 'Walk',
    last_name: 'Client',
    usage_limits: { monthly_credits: 10 },
  });
  return created.id;
}

/** One account per section keeps every key far below its own and the account's rate limits. */
const keysBySection = new Map<string, Promise<SectionKeys>>();

function keysFor(section: ApiSection) {
  let keys = keysBySection.get(section);
  if (!keys) {
    keys = (async () => {
      const { userId } = await service.createAccount({ agency: true });
      const em = service.services.orm.em.fork();
      const otherSection = API_SECTIONS.find((candidate) => candidate !== section && candidate !== 'API Keys')!;
      const outside = await createScopedKey(em, service.services.secrets, userId, {
        label: `outside ${section}`,
        scopes: { tags: [otherSection], read_only: false, sub_account_ids: ['*'], rate_limit_per_min: 300 },
      });
      // The API Keys section cannot be granted; `[]` (every section) is the widest grant there is.
      const inside = await createScopedKey(em, service.services.secrets, userId, {
        label: `read-only ${section}`,
        scopes: { tags: section === 'API Keys' ? [] : [section], sub_account_ids: ['*'], rate_limit_per_min: 300 },
      });
      const other = await newClient(userId);
      const grants: Record<Grant, string[]> = { '[]': [], '[other]': [other], '["*"]': ['*'] };
      const byGrant = {} as Record<Grant, string>;
      for (const grant of GRANTS) {
        const key = await createScopedKey(em, service.services.secrets, userId, {
          label: `${grant} ${section}`,
          scopes: { tags: section === 'API Keys' ? [] : [section], read_only: false, sub_account_ids: grants[grant], rate_limit_per_min: 300 },
        });
        byGrant[grant] = key.apiKey;
      }
      return { outsideSection: outside.apiKey, readOnlyInSection: inside.apiKey, agencyId: userId, byGrant };
    })();
    keysBySection.set(section, keys);
  }
  return keys;
}

type Outcome = { status: number; errorCode: unknown; detail: string };

/** The client account a call names: through `userId`, or through an input field (path, body or query). */
type Target = { userId?: string; field?: string; id?: string };

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
  const response = await service.request(openapi.method, path, {
    apiKey,
    query: { userId: target.userId, ...(hasBody ? {} : named) },
    body: hasBody ? named : undefined,
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
    const result = await call(target.field ? { [target.field]: target.id } : {});
    return { status: 200, errorCode: undefined, detail: `${procedurePath}: resolved ${String(result)}` };
  } catch (error) {
    const cause = error instanceof TRPCError && error.cause instanceof ApiError ? error.cause : null;
    return { status: cause?.status ?? 500, errorCode: cause?.code ?? cause?.status, detail: `${procedurePath}: ${String(error)}` };
  }
}

function call(procedurePath: string, meta: ProcedureMeta, apiKey: string, target?: Target): Promise<Outcome> {
  return meta.openapi ? callOverRest(meta, apiKey, target) : callOverTrpc(procedurePath, apiKey, target);
}

const covered = procedures.filter(([, procedure]) => procedure._def.meta?.openapi?.protect !== false);

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

const writes = covered.filter(([, procedure]) => procedure._def.meta?.access !== 'read');

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

// Key management is closed to every scoped key (rule 6), so its procedures say
// nothing about sub_account_ids; every other procedure a scoped key can reach is walked.
const reachable = covered.filter(([, procedure]) => procedure._def.meta?.section !== 'API Keys' && procedure._def.meta?.requires !== 'owner');

type Way = 'client SC1 as userId' | 'client SC1 named in its input' | 'every client';
/** Each way a procedure can reach a client account: `userId` (all but agency-only ones) and what its meta names. */
function waysOf(meta: ProcedureMeta): Way[] {
  const ways: Way[] = [];
  if (!meta.agencyOnly) ways.push('client SC1 as userId');
  if (meta.targetAccount === 'everyClient') ways.push('every client');
  else if (meta.targetAccount) ways.push('client SC1 named in its input');
  return ways;
}
const targeting = reachable.flatMap(([path, procedure]) => waysOf(procedure._def.meta!).map((way) => [path, way, procedure] as const));

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
    ]),
  );
  // Agency-only procedures refuse userId and act on client accounts, so their
  // meta must say which: otherwise no scope rule would reach those accounts.
  for (const [path, procedure] of reachable) {
    if (procedure._def.meta?.agencyOnly) expect(procedure._def.meta!.targetAccount, `${path} targetAccount`).toBeDefined();
  }
});

/**
 * Calls the procedure on client SC1 of the section's agency: SC1 is made for
 * the call, so what one case changes (a deletion) cannot affect another.
 */
async function callOnClient(path: string, way: Way, procedure: ProcedureEntry, grant: Grant): Promise<Outcome> {
  const meta = procedure._def.meta!;
  const keys = await keysFor(meta.section);
  const sc1 = await newClient(keys.agencyId);
  const target: Target =
    way === 'client SC1 as userId'
      ? { userId: sc1 }
      : way === 'client SC1 named in its input'
        ? { field: (meta.targetAccount as { inputField: string }).inputField, id: sc1 }
        : {};
  return call(path, meta, keys.byGrant[grant], target);
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
    // Anything else may follow (400 for the empty input, 404 for dummy ids): what
    // matters is that the key's scopes let the call through.
    expect(outcome.errorCode, outcome.detail).not.toBe('key_scope_denied');
    expect(outcome.errorCode, outcome.detail).not.toBe('key_read_only');
  },
);
