// DELETE /lists/{id}: the list goes; its contacts stay.
import type { EntityManager } from '@mikro-orm/postgresql';
import { List } from '../db/entities/index.ts';
import { NotFoundError } from '../errors.ts';

/** Another account's list is not found. */
export async function deleteList(em: EntityManager, accountId: string, listId: string): Promise<void> {
  const deleted = await em.nativeDelete(List, { id: listId, account: accountId });
  if (deleted === 0) throw new NotFoundError(`List ${listId} not found`);
}
