// Default-deny over the whole API: every procedure of appRouter, including the
// ones added after this test was written, refuses a scoped key outside its
// sections (403 key_scope_denied) and a read-only key on a write (403
// key_read_only), before it looks at its input.
import { afterAll, beforeAll, expect, test } from 'vitest';
import { TRPCError } from '@trpc/server';
import { appRouter } from '../../routers/index.ts';
import { createScopedKey } from '../../server/api-keys/scoped-keys.ts';
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

/** One account per section keeps every key far below its own and the account's rate limits. */
const keysBySection = new Map<string, Promise<{ outsideSection: string; readOnlyInSection: string }>>();

function keysFor(section: ApiSection) {
  let keys = keysBySection.get(section);
  if (!keys) {
    keys = (async () => {
      const { userId } = await service.createAccount({ agency: true });
      const em = service.services.orm.em.fork();
      const other = API_SECTIONS.find((candidate) => candidate !== section && candidate !== 'API Keys')!;
      const outside = await createScopedKey(em, service.services.secrets, userId, {
        label: `outside ${section}`,
        scopes: { tags: [other], read_only: false, sub_account_ids: ['*'], rate_limit_per_min: 300 },
      });
      // The API Keys section cannot be granted; `[]` (every section) is the widest grant there is.
      const inside = await createScopedKey(em, service.services.secrets, userId, {
        label: `read-only ${section}`,
        scopes: { tags: section === 'API Keys' ? [] : [section], sub_account_ids: ['*'], rate_limit_per_min: 300 },
      });
      return { outsideSection: outside.apiKey, readOnlyInSection: inside.apiKey };
    })();
    keysBySection.set(section, keys);
  }
  return keys;
}

type Outcome = { status: number; errorCode: unknown; detail: string };

async function callOverRest(meta: ProcedureMeta, apiKey: string): Promise<Outcome> {
  const openapi = meta.openapi!;
  const path = openapi.path.replace(/\{(\w+)\}/g, (_, name: string) => `dummy_${name}`);
  const hasBody = openapi.method === 'POST' || openapi.method === 'PUT' || openapi.method === 'PATCH';
  const response = await service.request(openapi.method, path, { apiKey, body: hasBody ? {} : undefined });
  return { status: response.status, errorCode: response.body?.error_code, detail: `${openapi.method} ${openapi.path}: ${response.text}` };
}

/** Procedures without a REST path (subscriptions, tRPC-only) are called through tRPC itself. */
async function callOverTrpc(procedurePath: string, apiKey: string): Promise<Outcome> {
  const caller = createCallerFactory(appRouter)(
    createContext(service.services, { method: 'POST', query: new URLSearchParams({ apiKey }), headers: {}, ip: '127.0.0.1' }),
  ) as unknown as Record<string, unknown>;
  const call = procedurePath.split('.').reduce<any>((node, segment) => node[segment], caller) as (input: unknown) => Promise<unknown>;
  try {
    const result = await call({});
    return { status: 200, errorCode: undefined, detail: `${procedurePath}: resolved ${String(result)}` };
  } catch (error) {
    const cause = error instanceof TRPCError && error.cause instanceof ApiError ? error.cause : null;
    return { status: cause?.status ?? 500, errorCode: cause?.code ?? cause?.status, detail: `${procedurePath}: ${String(error)}` };
  }
}

function call(procedurePath: string, meta: ProcedureMeta, apiKey: string): Promise<Outcome> {
  return meta.openapi ? callOverRest(meta, apiKey) : callOverTrpc(procedurePath, apiKey);
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
