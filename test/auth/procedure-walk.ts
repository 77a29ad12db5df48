// The authorization walk over the whole router that test/auth/every-procedure.test.ts runs over
// REST and createCaller, and test/auth/every-procedure-over-socket.test.ts over a /trpc
// WebSocket: the procedures it covers, the keys of each section, and the client accounts.
import { appRouter } from '../../routers/index.ts';
import { createScopedKey } from '../../server/api-keys/create-scoped-key.ts';
import { createSubAccount } from '../../server/sub-accounts/create-sub-account.ts';
import { API_SECTIONS, type ApiSection } from '../../server/auth/scopes.ts';
import type { ProcedureMeta } from '../../server/trpc.ts';
import type { TestService } from '../helpers/service.ts';

export type ProcedureEntry = { _def: { meta?: ProcedureMeta; type: 'query' | 'mutation' | 'subscription' } };
const procedures = Object.entries(appRouter._def.procedures as unknown as Record<string, ProcedureEntry>);

export const covered = procedures.filter(([, procedure]) => procedure._def.meta?.openapi?.protect !== false);
export const writes = covered.filter(([, procedure]) => procedure._def.meta?.access !== 'read');
// Key management is closed to every scoped key (rule 6), so its procedures say
// nothing about sub_account_ids; every other procedure a scoped key can reach is walked.
export const reachable = covered.filter(([, procedure]) => procedure._def.meta?.section !== 'API Keys' && procedure._def.meta?.requires !== 'owner');

export type Way = 'client SC1 as userId' | 'client SC1 named in its input' | 'every client' | 'every client, by an input flag';
/** Each way a procedure can reach a client account: `userId` (all but agency-only ones) and what its meta names. */
export function waysOf(meta: ProcedureMeta): Way[] {
  const ways: Way[] = [];
  if (!meta.agencyOnly) ways.push('client SC1 as userId');
  const target = meta.targetAccount;
  if (target === 'everyClient') ways.push('every client');
  else if (target && 'everyClientWhenSet' in target) ways.push('every client, by an input flag');
  else if (target) ways.push('client SC1 named in its input');
  return ways;
}
/** Procedures with an input flag that needs another section besides their own. */
export const flagged = reachable.filter(([, procedure]) => procedure._def.meta?.sectionWhenSet);
export const targeting = reachable.flatMap(([path, procedure]) => waysOf(procedure._def.meta!).map((way) => [path, way, procedure] as const));

export type SectionKeys = {
  outsideSection: string;
  readOnlyInSection: string;
  agencyId: string;
  /** The agency's main key: no scopes, so the answer it gets is what the procedure itself says. */
  mainKey: string;
  /** Writable keys of the section, by the sub_account_ids they were granted. */
  byGrant: Record<Grant, string>;
};
export type Grant = '[]' | '[other]' | '["*"]';
const GRANTS: Grant[] = ['[]', '[other]', '["*"]'];

/**
 * The client account a call names: through `userId`, or through an input field (path, body or
 * query); `flags` are boolean input fields the call sets to true (every client, or another section).
 */
export type Target = { userId?: string; field?: string; id?: string; flags?: Record<string, true> };

/** The call's input as the walk sends it: the named id and the flags. */
export function inputOf(target: Target): Record<string, unknown> {
  return { ...(target.field ? { [target.field]: target.id } : {}), ...target.flags };
}

export type Outcome = { status: number; errorCode: unknown; detail: string };

export function createProcedureWalk(service: () => TestService) {
  let clientCounter = 0;
  async function newClient(agencyId: string): Promise<string> {
    clientCounter += 1;
    const created = await createSubAccount(service().services.orm.em.fork(), agencyId, {
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
        const { userId, apiKey: mainKey } = await service().createAccount({ agency: true });
        const em = service().services.orm.em.fork();
        const secrets = service().services.secrets;
        const otherSection = API_SECTIONS.find((candidate) => candidate !== section && candidate !== 'API Keys')!;
        const outside = await createScopedKey(em, secrets, userId, {
          label: `outside ${section}`,
          scopes: { tags: [otherSection], read_only: false, sub_account_ids: ['*'], rate_limit_per_min: 300 },
        });
        // The API Keys section cannot be granted; `[]` (every section) is the widest grant there is.
        const inside = await createScopedKey(em, secrets, userId, {
          label: `read-only ${section}`,
          scopes: { tags: section === 'API Keys' ? [] : [section], sub_account_ids: ['*'], rate_limit_per_min: 300 },
        });
        const other = await newClient(userId);
        const grants: Record<Grant, string[]> = { '[]': [], '[other]': [other], '["*"]': ['*'] };
        const byGrant = {} as Record<Grant, string>;
        for (const grant of GRANTS) {
          const key = await createScopedKey(em, secrets, userId, {
            label: `${grant} ${section}`,
            scopes: { tags: section === 'API Keys' ? [] : [section], read_only: false, sub_account_ids: grants[grant], rate_limit_per_min: 300 },
          });
          byGrant[grant] = key.apiKey;
        }
        return { outsideSection: outside.apiKey, readOnlyInSection: inside.apiKey, agencyId: userId, mainKey, byGrant };
      })();
      keysBySection.set(section, keys);
    }
    return keys;
  }

  /**
   * The key and target for calling the procedure on client SC1 of the section's agency: SC1
   * is made for the call, so what one case changes (a deletion) cannot affect another.
   */
  async function onClient(way: Way, procedure: ProcedureEntry, grant: Grant | 'main key'): Promise<{ apiKey: string; target: Target }> {
    const meta = procedure._def.meta!;
    const keys = await keysFor(meta.section);
    const sc1 = await newClient(keys.agencyId);
    const target: Target =
      way === 'client SC1 as userId'
        ? { userId: sc1 }
        : way === 'client SC1 named in its input'
          ? { field: (meta.targetAccount as { inputField: string }).inputField, id: sc1 }
          : way === 'every client, by an input flag'
            ? { flags: { [(meta.targetAccount as { everyClientWhenSet: string }).everyClientWhenSet]: true } }
            : {};
    return { apiKey: grant === 'main key' ? keys.mainKey : keys.byGrant[grant], target };
  }

  /** Writable keys of the procedure's section (every client), without and with the section its input flag needs. */
  async function flagKeys(meta: ProcedureMeta): Promise<{ ownSectionOnly: string; withFlagSection: string; mainKey: string }> {
    const keys = await keysFor(meta.section);
    const rule = meta.sectionWhenSet!;
    const both = await createScopedKey(service().services.orm.em.fork(), service().services.secrets, keys.agencyId, {
      label: `${meta.section} and ${rule.section}`,
      scopes: { tags: [meta.section, rule.section], read_only: false, sub_account_ids: ['*'], rate_limit_per_min: 300 },
    });
    return { ownSectionOnly: keys.byGrant['["*"]'], withFlagSection: both.apiKey, mainKey: keys.mainKey };
  }

  return { keysFor, onClient, newClient, flagKeys };
}
