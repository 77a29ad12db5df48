// DELETE /sub-accounts/{id}: the client account goes; the database cascades to
// everything it owns.
import type { EntityManager } from '@mikro-orm/postgresql';
import { announceCredentialChange } from '../auth/credential-changes.ts';
import { Account } from '../db/entities/index.ts';
import { NotFoundError } from '../errors.ts';
import { requireAgency } from './find-sub-account.ts';

export async function deleteSubAccount(em: EntityManager, agencyId: string, subAccountId: string): Promise<void> {
  await requireAgency(em, agencyId);
  await em.transactional(async (tx) => {
    const deleted = await tx.nativeDelete(Account, { id: subAccountId, agency: agencyId });
    if (deleted === 0) throw new NotFoundError('Sub-account not found');
    // Its keys, and the agency's subscriptions on it, end now rather than at the next periodic check.
    await announceCredentialChange(tx, subAccountId);
  });
}
