// PUT /api-keys/{id}: a scoped key's label, scopes or expiry.
import type { EntityManager } from '@mikro-orm/postgresql';
import type { z } from 'zod';
import { announceCredentialChange } from '../auth/credential-changes.ts';
import { ConflictError, InvalidInputError } from '../errors.ts';
import { ScopedKeyCreateInput } from './create-scoped-key.ts';
import { requireScopedKey } from './find-scoped-key.ts';
import { assertOwnClients, expiryFrom, scopesFrom } from './scoped-key-fields.ts';
import { toScopedKeyRecord, type ScopedKeyRecord } from './scoped-key-record.ts';

export const ScopedKeyUpdateInput = ScopedKeyCreateInput;
export type ScopedKeyUpdateInput = z.infer<typeof ScopedKeyUpdateInput>;

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
    return toScopedKeyRecord(key);
  });
}
