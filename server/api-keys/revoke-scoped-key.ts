// DELETE /api-keys/{id}: revoke a scoped key; its live subscriptions end now.
import type { EntityManager } from '@mikro-orm/postgresql';
import { announceCredentialChange } from '../auth/credential-changes.ts';
import { requireScopedKey } from './find-scoped-key.ts';

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
