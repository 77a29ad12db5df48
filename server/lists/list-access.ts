// A list of the account acted on; another account's list is not found here.
import type { EntityManager } from '@mikro-orm/postgresql';
import { List } from '../db/entities/index.ts';
import { NotFoundError } from '../errors.ts';

/** A list of the account, or 404 (another account's list is not found). */
export async function requireOwnList(em: EntityManager, accountId: string, listId: string): Promise<List> {
  const list = await em.findOne(List, { id: listId, account: accountId });
  if (!list) throw new NotFoundError(`List ${listId} not found`);
  return list;
}
