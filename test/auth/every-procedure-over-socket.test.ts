// The default-deny walk of every-procedure.test.ts, over a /trpc WebSocket: every query,
// mutation and subscription of appRouter, called on a socket opened with a scoped key (and
// `userId` on the socket's URL), refuses the key outside its sections, a read-only key on a
// write, a key whose sub_account_ids do not cover the client account, and a key without the
// section an input flag needs, exactly as over HTTPS. Each call is authorized on its own,
// whatever the socket was opened with.
import { afterAll, beforeAll, expect, test } from 'vitest';
import { startTestService, type TestService } from '../helpers/service.ts';
import { openRawTrpcSocket } from '../helpers/trpc-socket.ts';
import { covered, createProcedureWalk, flagged, inputOf, targeting, writes, type Outcome, type ProcedureEntry, type Target } from './procedure-walk.ts';

let service: TestService;
beforeAll(async () => {
  service = await startTestService();
});
afterAll(async () => {
  await service?.stop();
});

const { keysFor, onClient, flagKeys } = createProcedureWalk(() => service);

/** One call on a socket of its own: what it answers first (a result, a started subscription, or an error). */
async function callOverSocket(path: string, procedure: ProcedureEntry, apiKey: string, target: Target = {}): Promise<Outcome> {
  const socket = await openRawTrpcSocket(service.origin, { apiKey, ...(target.userId ? { userId: target.userId } : {}) });
  try {
    socket.send({ id: 1, method: procedure._def.type, params: { path, input: inputOf(target) } });
    const frame = await socket.waitFor((candidate) => candidate.id === 1 || candidate.id === null);
    const detail = `${procedure._def.type} ${path} over the socket: ${JSON.stringify(frame)}`;
    if (frame.error) return { status: frame.error.data.httpStatus, errorCode: frame.error.data.error_code, detail };
    return { status: 200, errorCode: undefined, detail };
  } finally {
    await socket.close();
  }
}

test('the socket walk covers queries, mutations and the subscription', () => {
  const types = new Set(covered.map(([, procedure]) => procedure._def.type));
  expect(types).toEqual(new Set(['query', 'mutation', 'subscription']));
});

test.each(covered.map(([path, procedure]) => [path, procedure] as const))(
  '%s over the socket: a scoped key whose tags exclude its section gets FORBIDDEN key_scope_denied',
  async (path, procedure) => {
    const { outsideSection } = await keysFor(procedure._def.meta!.section);
    const outcome = await callOverSocket(path, procedure, outsideSection);
    expect(outcome.status, outcome.detail).toBe(403);
    expect(outcome.errorCode, outcome.detail).toBe('key_scope_denied');
  },
);

test.each(writes.map(([path, procedure]) => [path, procedure] as const))(
  '%s (write) over the socket: a read-only key that includes its section gets FORBIDDEN key_read_only',
  async (path, procedure) => {
    const meta = procedure._def.meta!;
    const { readOnlyInSection } = await keysFor(meta.section);
    const outcome = await callOverSocket(path, procedure, readOnlyInSection);
    const expected = meta.section === 'API Keys' || meta.requires === 'owner' ? 'key_scope_denied' : 'key_read_only';
    expect(outcome.status, outcome.detail).toBe(403);
    expect(outcome.errorCode, outcome.detail).toBe(expected);
  },
);

test.each(targeting.flatMap(([path, way, procedure]) => (['[]', '[other]'] as const).map((grant) => [path, way, grant, procedure] as const)))(
  '%s, %s, over the socket: a key with sub_account_ids %s gets FORBIDDEN key_scope_denied',
  async (path, way, grant, procedure) => {
    const { apiKey, target } = await onClient(way, procedure, grant);
    const outcome = await callOverSocket(path, procedure, apiKey, target);
    expect(outcome.status, outcome.detail).toBe(403);
    expect(outcome.errorCode, outcome.detail).toBe('key_scope_denied');
  },
);

test.each(targeting.map(([path, way, procedure]) => [path, way, procedure] as const))(
  '%s, %s, over the socket: a key with sub_account_ids ["*"] is not refused for its scopes',
  async (path, way, procedure) => {
    const { apiKey, target } = await onClient(way, procedure, '["*"]');
    const outcome = await callOverSocket(path, procedure, apiKey, target);
    expect(outcome.errorCode, outcome.detail).not.toBe('key_scope_denied');
    expect(outcome.errorCode, outcome.detail).not.toBe('key_read_only');
  },
);

test.each(flagged.map(([path, procedure]) => [path, procedure] as const))(
  "%s with its flag set, over the socket: a writable key of its section alone gets FORBIDDEN key_scope_denied; with the flag's section too it is not refused",
  async (path, procedure) => {
    const meta = procedure._def.meta!;
    const { ownSectionOnly, withFlagSection } = await flagKeys(meta);
    const target: Target = { flags: { [meta.sectionWhenSet!.field]: true } };
    const refused = await callOverSocket(path, procedure, ownSectionOnly, target);
    expect(refused.status, refused.detail).toBe(403);
    expect(refused.errorCode, refused.detail).toBe('key_scope_denied');
    const allowed = await callOverSocket(path, procedure, withFlagSection, target);
    expect(allowed.errorCode, allowed.detail).not.toBe('key_scope_denied');
    expect(allowed.errorCode, allowed.detail).not.toBe('key_read_only');
  },
);
