// What a credential may do, and the one check every authenticated procedure
// passes through. Default-deny: anything not clearly allowed is refused.
import type { ApiKeyScopes } from '../db/entities/api-key.ts';
import { ForbiddenError } from '../errors.ts';

/** API sections as scoped keys name them; each procedure's meta names one. */
export const API_SECTIONS = [
  'Analytics',
  'API Keys',
  'Appointments',
  'Broadcasts',
  'Campaigns',
  'Chat Sessions',
  'Chat Widget',
  'Contacts',
  'Integrations',
  'Lists',
  'Messages',
  'Sub Accounts',
  'Summaries',
  'Tags',
  'Tasks',
  'Templates',
  'Usage',
  'Webhooks',
] as const;
export type ApiSection = (typeof API_SECTIONS)[number];

export type Access = 'read' | 'write';

/** What a scoped key may do: the stored column's shape. */
export type Scopes = ApiKeyScopes;

/** Main key, scoped key, or a first-party (owner) session from an ID token. */
export type Credential = {
  type: 'main' | 'scoped' | 'session';
  /** The api_keys row id; the token subject for sessions. */
  id: string;
  accountId: string;
  scopes: Scopes | null;
  rateLimitPerMin: number;
  /** A session's ID token `exp` (ms since the epoch); a key's expiry is in its row (credentialExpiry). */
  expiresAt?: number;
};

export type ProcedureAccess = {
  section: ApiSection;
  access: Access;
  /** `owner`: main key or owner session only (key management). */
  requires?: 'owner';
};

/**
 * A client account an operation touches besides the one `userId` selects:
 * `{ inputField }` names the raw input field holding its id (`/sub-accounts/{id}`);
 * `'everyClient'` is an operation over all of the caller's clients, present and
 * future (creating or listing them); `{ everyClientWhenSet }` is one when the raw
 * input sets that boolean field to true (a webhook inherited by every client).
 */
export type TargetAccount = { inputField: string } | 'everyClient' | { everyClientWhenSet: string };

/**
 * A boolean input field that, when true, makes the call also need another section's
 * access (minting a signing secret at creation needs what the signing-secret routes need).
 */
export type SectionWhenSet = { field: string; section: ApiSection; access: Access };

export function scopeDenied(message: string): ForbiddenError {
  return new ForbiddenError(message, { code: 'key_scope_denied' });
}

/**
 * A scoped key acts on its own account, and on another only when
 * `sub_account_ids` lists it or is `["*"]`. That the account really is a client
 * of the caller is a separate check (selectAccount for `userId`, the domain's
 * 404 for an id in the input).
 */
export function assertAccountInScope(credential: Credential, accountId: string): void {
  if (credential.type !== 'scoped' || accountId === credential.accountId) return;
  const allowed = credential.scopes?.sub_account_ids ?? [];
  if (!allowed.includes('*') && !allowed.includes(accountId)) {
    throw scopeDenied('This API key is not allowed to act on that account');
  }
}

/**
 * Creating or listing client accounts reaches beyond any fixed list of ids (a
 * new client cannot be listed in advance), so only `["*"]` covers it. Listing is
 * refused rather than filtered to the listed ids: filtering would put a scope
 * decision inside the domain query; such a key still reads each of its clients
 * by id.
 */
export function assertEveryClientInScope(credential: Credential): void {
  if (credential.type !== 'scoped') return;
  if (!(credential.scopes?.sub_account_ids ?? []).includes('*')) {
    throw scopeDenied('This API key is not allowed to act on every client account; that needs sub_account_ids ["*"]');
  }
}

/** Throws unless the credential may call a procedure with this access. */
export function assertProcedureAllowed(credential: Credential, procedure: ProcedureAccess | undefined): void {
  if (!procedure) throw scopeDenied('This operation is not available to API keys');
  if (credential.type !== 'scoped') return;
  const scopes = credential.scopes;
  if (!scopes || procedure.requires === 'owner' || procedure.section === 'API Keys') {
    throw scopeDenied('Managing API keys requires the main API key or an owner session');
  }
  if (scopes.tags.length > 0 && !scopes.tags.includes(procedure.section)) {
    throw scopeDenied(`This API key is not allowed to use the ${procedure.section} section`);
  }
  if (procedure.access !== 'read' && scopes.read_only) {
    throw new ForbiddenError('This API key is read-only', { code: 'key_read_only' });
  }
}
