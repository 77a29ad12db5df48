// DELETE /lists/{id}: the list goes; its contacts stay.
import type { EntityManager } from '@mikro-orm/postgresql';
import { requireOwnList } from './list-access.ts';

export async function deleteList(em: EntityManager, accountId: string, listId: string): Promise<void> {
  const list = await requireOwnList(em, accountId, listId);
  await em.remove(list).flush();
}
