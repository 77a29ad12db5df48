// Whether contacts may be added to lists: every list must exist (404), then
// belong to the account acted on (403), checked before anything is written.
import type { EntityManager } from '@mikro-orm/postgresql';
import { List } from '../db/entities/index.ts';
import { ForbiddenError, NotFoundError } from '../errors.ts';

/**
 * Throws why contacts may not be added to these lists: the first missing one (404),
 * else the first of another account (403). `existing`: the lists that exist, with owners.
 */
export function refuseListsForContacts(accountId: string, listIds: string[], existing: { id: string; account_id: string }[]): never {
  const owners = new Map(existing.map((list) => [list.id, list.account_id]));
  const missing = listIds.find((id) => !owners.has(id));
  if (missing) throw new NotFoundError(`List ${missing} not found`);
  const foreign = listIds.find((id) => owners.get(id) !== accountId);
  if (foreign) throw new ForbiddenError(`You do not have permission to add contacts to list ${foreign}`);
  throw new Error('refuseListsForContacts: every list is allowed');
}

/** A list of the account, or 404 (another account's list is not found). */
export async function requireOwnList(em: EntityManager, accountId: string, listId: string): Promise<List> {
  const list = await em.findOne(List, { id: listId, account: accountId });
  if (!list) throw new NotFoundError(`List ${listId} not found`);
  return list;
}
