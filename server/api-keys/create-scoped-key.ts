// POST /api-keys: a scoped key, a limited key an account hands to an integration.
// Each has its own permission set (sections, read-only, managed accounts) and its
// own rate-limit budget; authenticate.ts enforces them on every request. The value
// is shown once here and never stored retrievably; it never changes.
import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { maskKey, mintKeyValue } from '../auth/key-format.ts';
import { ApiKey } from '../db/entities/index.ts';
import { newId } from '../db/ids.ts';
import type { Secrets } from '../secrets.ts';
import { assertOwnClients, expiryFrom, ExpiresAt, scopesFrom, ScopesInput } from './scoped-key-fields.ts';
import { toScopedKeyRecord, type ScopedKeyRecord } from './scoped-key-record.ts';

export const ScopedKeyCreateInput = z.object({
  label: z.string().trim().max(200, 'label must be at most 200 characters').optional(),
  scopes: ScopesInput.optional(),
  expires_at: ExpiresAt.optional(),
});
export type ScopedKeyCreateInput = z.infer<typeof ScopedKeyCreateInput>;

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
  return { apiKey: value, key: toScopedKeyRecord(key) };
}
