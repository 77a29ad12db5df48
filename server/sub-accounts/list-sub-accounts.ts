// GET /sub-accounts: the agency's clients, oldest first, a page at a time.
import type { EntityManager } from '@mikro-orm/postgresql';
import { Account } from '../db/entities/index.ts';
import { findEntityPage, type PageInput } from '../pagination.ts';
import type { Secrets } from '../secrets.ts';
import { requireAgency } from './find-sub-account.ts';
import { toSubAccountRecord, type SubAccountRecord } from './sub-account-record.ts';

export async function listSubAccounts(
  em: EntityManager,
  secrets: Secrets,
  agencyId: string,
  input: PageInput,
): Promise<{ sub_accounts: SubAccountRecord[]; next_cursor: string | null }> {
  await requireAgency(em, agencyId);
  const { items, next_cursor } = await findEntityPage(em, Account, { agency: agencyId }, secrets, `sub-accounts:${agencyId}`, input);
  return { sub_accounts: items.map(toSubAccountRecord), next_cursor };
}
