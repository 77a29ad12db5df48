// Scoped API keys: limited keys an account hands to integrations. Each has its
// own permission set (sections, read-only, managed accounts) and its own
// rate-limit budget; authenticate.ts enforces them on every request. The value
// is shown once at creation and never stored retrievably; it never changes.
import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { Account, ApiKey } from '../db/entities/index.ts';
import { newId } from '../db/ids.ts';
import { announceCredentialChange } from '../auth/credential-changes.ts';
import { maskKey, mintKeyValue } from '../auth/key-format.ts';
import { API_SECTIONS, type ApiSection, type Scopes } from '../auth/scopes.ts';
import { ConflictError, InvalidInputError, NotFoundError } from '../errors.ts';
import { SCOPED_KEY_DEFAULT_RATE_LIMIT, SCOPED_KEY_MAX_RATE_LIMIT } from '../rate-limit/limits.ts';
import type { Secrets } from '../secrets.ts';
import { columnDateTime } from '../input-rules.ts';

/** The listing shows at most this many keys, newest first (Limits). */
export const SCOPED_KEY_LISTING_LIMIT = 200;

const ScopesInput = z
  .object({
    // A literal, not z.boolean(): trpc-to-openapi switches coercion on for booleans in
    // inputs, and Boolean('false') or Boolean(0) must never make a key writable (rule 3).
    read_only: z.literal([true, false], { error: 'scopes.read_only must be true or false' }).optional(),
    tags: z.array(z.string({ error: 'scopes.tags must be section names' })).max(API_SECTIONS.length * 2).optional(),
    sub_account_ids: z
      .array(z.string({ error: 'scopes.sub_account_ids must be account ids' }).min(1))
      .max(1000)
      .optional(),
    rate_limit_per_min: z
      .number({ error: 'scopes.rate_limit_per_min must be a number' })
      .int('scopes.rate_limit_per_min must be a whole number')
      .min(1, 'scopes.rate_limit_per_min must be at least 1')
      .max(SCOPED_KEY_MAX_RATE_LIMIT, `scopes.rate_limit_per_min must be at most ${SCOPED_KEY_MAX_RATE_LIMIT}`)
      .optional(),
  })
  // A misspelt member would silently fall back to a default; say so instead.
  .strict();

const ExpiresAt = columnDateTime('expires_at must be an ISO 8601 date-time before the year 10000, for example 2030-01-31T00:00:00Z').nullable();

export const ScopedKeyCreateInput = z.object({
  label: z.string().trim().max(200, 'label must be at most 200 characters').optional(),
  scopes: ScopesInput.optional(),
  expires_at: ExpiresAt.optional(),
});
export type ScopedKeyCreateInput = z.infer<typeof ScopedKeyCreateInput>;

export const ScopedKeyUpdateInput = ScopedKeyCreateInput;
export type ScopedKeyUpdateInput = z.infer<typeof ScopedKeyUpdateInput>;

export type ScopedKeyRecord = {
  id: string;
  label: string;
  key_preview: string;
  scopes: Scopes;
  expires_at: string | null;
  last_used_at: string | null;
  created_at: string;
  revoked_at: string | null;
  revoked: boolean;
};

const SECTION_BY_NAME = new Map<string, ApiSection>(API_SECTIONS.map((section) => [section.toLowerCase(), section]));

function canonicalTags(tags: string[]): ApiSection[] {
  const sections = tags.map((tag) => SECTION_BY_NAME.get(tag.trim().toLowerCase()));
  if (sections.includes('API Keys')) {
    throw new InvalidInputError('The API Keys section cannot be granted to a scoped key', { code: 'invalid_scopes' });
  }
  const unknown = tags.find((_, index) => sections[index] === undefined);
  if (unknown !== undefined) {
    const grantable = API_SECTIONS.filter((section) => section !== 'API Keys').join(', ');
    throw new InvalidInputError(`scopes.tags: "${unknown}" is not an API section; sections are ${grantable}`);
  }
  return [...new Set(sections as ApiSection[])];
}

/**
 * The whole permission set from what was sent; every missing member takes its
 * default (rules 1-4: read-only unless `false` is sent, Analytics only unless
 * `tags` is sent (`[]` = every section), own account only, 60 per minute).
 */
export function scopesFrom(input: z.infer<typeof ScopesInput> | undefined): Scopes {
  const subAccounts = [...new Set(input?.sub_account_ids ?? [])];
  return {
    read_only: input?.read_only !== false,
    tags: input?.tags === undefined ? ['Analytics'] : canonicalTags(input.tags),
    sub_account_ids: subAccounts.includes('*') ? ['*'] : subAccounts,
    rate_limit_per_min: input?.rate_limit_per_min ?? SCOPED_KEY_DEFAULT_RATE_LIMIT,
  };
}

/**
 * Every id in sub_account_ids must be a client account of the key's owner (400
 * naming the first that is not), so a key never carries a grant its owner could
 * not give. `["*"]` is accepted from any account: it means "the accounts this
 * account manages", which for a non-agency is none, so it grants nothing there;
 * the relation is still checked on every request.
 */
async function assertOwnClients(em: EntityManager, accountId: string, scopes: Scopes): Promise<void> {
  const ids = scopes.sub_account_ids.filter((id) => id !== '*');
  if (ids.length === 0) return;
  const clients = await em.find(Account, { id: { $in: ids }, agency: accountId }, { fields: ['id'] });
  const found = new Set(clients.map((client) => client.id));
  const stranger = ids.find((id) => !found.has(id));
  if (stranger !== undefined) {
    throw new InvalidInputError(`scopes.sub_account_ids: "${stranger}" is not a client account you manage`);
  }
}

function expiryFrom(value: string | null | undefined): Date | null {
  if (value === undefined || value === null) return null;
  const expiresAt = new Date(value);
  if (expiresAt.getTime() <= Date.now()) throw new InvalidInputError('expires_at must be in the future');
  return expiresAt;
}

function toRecord(key: ApiKey): ScopedKeyRecord {
  return {
    id: key.id,
    label: key.label ?? '',
    key_preview: key.keyPreview,
    scopes: key.scopes!,
    expires_at: key.expiresAt?.toISOString() ?? null,
    last_used_at: key.lastUsedAt?.toISOString() ?? null,
    created_at: key.createdAt.toISOString(),
    revoked_at: key.revokedAt?.toISOString() ?? null,
    revoked: key.revokedAt != null,
  };
}

export async function createScopedKey(
  em: EntityManager,
  secrets: Secrets,
  accountId: string,
  input: ScopedKeyCreateInput,
): Promise<{ apiKey: string; key: ScopedKeyRecord }> {
  const scopes = scopesFrom(input.scopes);
  const expiresAt = expiryFrom(input.expires_at);
  await assertOwnClients(em, accountId, scopes);
  const value = mintKeyValue('scoped');
  const key = em.create(ApiKey, {
    id: newId('key'),
    account: accountId,
    kind: 'scoped',
    keyHash: secrets.hashApiKey(value),
    keyCiphertext: null,
    keyPreview: maskKey(value),
    label: input.label ?? '',
    scopes,
    expiresAt,
    createdAt: new Date(),
  });
  await em.persist(key).flush();
  return { apiKey: value, key: toRecord(key) };
}

export async function listScopedKeys(em: EntityManager, accountId: string): Promise<ScopedKeyRecord[]> {
  // Ids are time-ordered, so id order is creation order.
  const keys = await em.find(
    ApiKey,
    { account: accountId, kind: 'scoped' },
    { orderBy: { id: 'desc' }, limit: SCOPED_KEY_LISTING_LIMIT },
  );
  return keys.map(toRecord);
}

async function requireScopedKey(em: EntityManager, accountId: string, id: string): Promise<ApiKey> {
  const key = id.startsWith('key_') ? await em.findOne(ApiKey, { id, account: accountId, kind: 'scoped' }) : null;
  if (!key) throw new NotFoundError('API key not found');
  return key;
}

/**
 * Changes label, scopes (replaced whole, rule 4) or expiry; the key value never
 * changes (rule 5). A revoked key cannot be changed (409).
 */
export async function updateScopedKey(
  em: EntityManager,
  accountId: string,
  id: string,
  input: ScopedKeyUpdateInput,
): Promise<ScopedKeyRecord> {
  if (input.label === undefined && input.scopes === undefined && input.expires_at === undefined) {
    throw new InvalidInputError('No fields to update: send label, scopes or expires_at', { reason: 'no_fields' });
  }
  const scopes = input.scopes === undefined ? undefined : scopesFrom(input.scopes);
  const expiresAt = input.expires_at === undefined ? undefined : expiryFrom(input.expires_at);
  return em.transactional(async (tx) => {
    const key = await requireScopedKey(tx, accountId, id);
    // A revoked key stays as it was revoked: its permissions are part of the record.
    if (key.revokedAt) throw new ConflictError('This API key is revoked and cannot be changed');
    if (scopes !== undefined) await assertOwnClients(tx, accountId, scopes);
    if (input.label !== undefined) key.label = input.label;
    if (scopes !== undefined) key.scopes = scopes;
    if (expiresAt !== undefined) key.expiresAt = expiresAt;
    await tx.flush();
    // Narrower scopes or an earlier expiry end the key's live subscriptions.
    if (scopes !== undefined || expiresAt !== undefined) await announceCredentialChange(tx, accountId);
    return toRecord(key);
  });
}

/** Revoking is idempotent: a revoked key stays revoked with its first revocation time. */
export async function revokeScopedKey(em: EntityManager, accountId: string, id: string): Promise<void> {
  await em.transactional(async (tx) => {
    const key = await requireScopedKey(tx, accountId, id);
    if (!key.revokedAt) {
      key.revokedAt = new Date();
      await tx.flush();
      await announceCredentialChange(tx, accountId);
    }
  });
}
