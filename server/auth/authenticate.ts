// Credential resolution for every authenticated request: pick the carrier,
// resolve the key with one indexed query on its HMAC, apply the plan and the
// key's scopes, then select the account the request acts on (`userId`).
import type { IncomingHttpHeaders } from 'node:http';
import { timingSafeEqual } from 'node:crypto';
import { planHasFeature } from '../accounts/plans.ts';
import { featureDisabledError, ForbiddenError, UnauthorizedError } from '../errors.ts';
import type { Services } from '../services.ts';
import { isWellFormedKey, looksLikeJwt } from './key-format.ts';
import { resolveIdToken } from './id-tokens.ts';
import { assertProcedureAllowed, scopeDenied, type Credential, type ProcedureAccess, type Scopes } from './scopes.ts';

export const MAIN_KEY_RATE_LIMIT = 300;

export type Carrier = { value: string; from: 'query' | 'header' | 'bearer' };

/** Query parameter, then X-API-Key, then bearer: the highest-ranked carrier present is used, right or wrong. */
export function pickCarrier(query: URLSearchParams, headers: IncomingHttpHeaders): Carrier | null {
  const fromQuery = query.get('apiKey');
  if (fromQuery !== null) return { value: fromQuery, from: 'query' };
  const fromHeader = headers['x-api-key'];
  if (typeof fromHeader === 'string') return { value: fromHeader, from: 'header' };
  const authorization = headers.authorization;
  if (typeof authorization === 'string' && /^bearer /i.test(authorization)) {
    return { value: authorization.slice(7).trim(), from: 'bearer' };
  }
  return null;
}

type KeyRow = {
  id: string;
  kind: 'main' | 'scoped';
  account_id: string;
  key_hash: Buffer;
  scopes: Scopes | null;
  /** Timestamps arrive as text from the ORM's pool. */
  expires_at: string | null;
  revoked_at: string | null;
  plan: string;
};

const RESOLVE_KEY_SQL = `
  select k.id, k.kind, k.account_id, k.key_hash, k.scopes, k.expires_at, k.revoked_at, a.plan
  from api_keys k join accounts a on a.id = k.account_id
  where k.key_hash = $1`;

async function resolveApiKey(services: Services, value: string): Promise<Credential> {
  if (!isWellFormedKey(value)) throw new UnauthorizedError();
  const hash = services.secrets.hashApiKey(value);
  const { rows } = await services.pool.query<KeyRow>({ name: 'resolve-api-key', text: RESOLVE_KEY_SQL, values: [hash] });
  const row = rows[0];
  if (!row || !timingSafeEqual(row.key_hash, hash)) throw new UnauthorizedError();
  if (row.revoked_at || (row.expires_at && Date.parse(row.expires_at) <= Date.now())) {
    throw new UnauthorizedError();
  }
  if (!planHasFeature(row.plan, 'api_access')) throw featureDisabledError('api_access');
  return {
    type: row.kind,
    id: row.id,
    accountId: row.account_id,
    scopes: row.kind === 'scoped' ? row.scopes : null,
    rateLimitPerMin: row.kind === 'scoped' && row.scopes ? row.scopes.rate_limit_per_min : MAIN_KEY_RATE_LIMIT,
  };
}

/** Who is calling: a key, or an ID token on the bearer carrier. */
export async function resolveCredential(
  services: Services,
  query: URLSearchParams,
  headers: IncomingHttpHeaders,
): Promise<Credential> {
  const carrier = pickCarrier(query, headers);
  if (!carrier) throw new UnauthorizedError();
  if (carrier.from === 'bearer' && looksLikeJwt(carrier.value)) {
    return resolveIdToken(services, carrier.value);
  }
  return resolveApiKey(services, carrier.value);
}

export type SelectedAccount = {
  /** The account the request acts on. */
  id: string;
  /** True when an agency acts on one of its client accounts. */
  managed: boolean;
};

/**
 * `userId` selects the caller's own account (the default) or a client account it
 * manages; the agency relation is read on every request, never cached.
 */
export async function selectAccount(
  services: Services,
  credential: Credential,
  userId: string | null,
  options: { agencyOnly?: boolean } = {},
): Promise<SelectedAccount> {
  if (userId === null || userId === '' || userId === credential.accountId) {
    if (userId && options.agencyOnly) throw new ForbiddenError('userId cannot be used on agency-only endpoints');
    return { id: credential.accountId, managed: false };
  }
  if (options.agencyOnly) throw new ForbiddenError('userId cannot be used on agency-only endpoints');
  const scopes = credential.scopes;
  if (credential.type === 'scoped') {
    const allowed = scopes?.sub_account_ids ?? [];
    if (!allowed.includes('*') && !allowed.includes(userId)) {
      throw scopeDenied('This API key is not allowed to act on that account');
    }
  }
  const { rows } = await services.pool.query<{ agency_id: string | null }>({
    name: 'select-managed-account',
    text: 'select agency_id from accounts where id = $1',
    values: [userId],
  });
  if (rows[0]?.agency_id !== credential.accountId) {
    if (credential.type === 'scoped') throw scopeDenied('This API key is not allowed to act on that account');
    throw new ForbiddenError('You do not have access to that account');
  }
  return { id: userId, managed: true };
}

export type Authenticated = { credential: Credential; account: SelectedAccount };

/** The whole check an authenticated procedure runs before its own code. */
export async function authenticate(
  services: Services,
  request: { query: URLSearchParams; headers: IncomingHttpHeaders },
  procedure: (ProcedureAccess & { agencyOnly?: boolean }) | undefined,
): Promise<Authenticated> {
  const credential = await resolveCredential(services, request.query, request.headers);
  assertProcedureAllowed(credential, procedure);
  const account = await selectAccount(services, credential, request.query.get('userId'), {
    agencyOnly: procedure?.agencyOnly,
  });
  return { credential, account };
}
