// An agency's client, read by the agency. Another agency's client is not found.
import type { EntityManager } from '@mikro-orm/postgresql';
import { Account } from '../db/entities/index.ts';
import { ForbiddenError, NotFoundError } from '../errors.ts';
import { toSubAccountRecord, type SubAccountRecord } from './sub-account-record.ts';

/** Only an agency account manages client sub-accounts. */
export async function requireAgency(em: EntityManager, accountId: string): Promise<void> {
  const account = await em.findOne(Account, accountId, { fields: ['id', 'isAgency'] });
  if (!account?.isAgency) throw new ForbiddenError('Only agency accounts can manage sub-accounts');
}

/** A client of the agency, or 404 (unknown ids and other agencies' clients alike). */
async function requireOwnSubAccount(em: EntityManager, agencyId: string, subAccountId: string): Promise<Account> {
  const account = await em.findOne(Account, { id: subAccountId, agency: agencyId });
  if (!account) throw new NotFoundError('Sub-account not found');
  return account;
}

export async function getSubAccount(em: EntityManager, agencyId: string, subAccountId: string): Promise<SubAccountRecord> {
  await requireAgency(em, agencyId);
  return toSubAccountRecord(await requireOwnSubAccount(em, agencyId, subAccountId));
}
