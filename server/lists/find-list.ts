// GET /lists/{id}: a list of the account acted on, with its contact count.
import type { EntityManager } from '@mikro-orm/postgresql';
import { requireOwnList } from './list-access.ts';
import { contactCounts, toListRecord, type ListRecord } from './list-record.ts';

export async function getList(em: EntityManager, accountId: string, listId: string): Promise<ListRecord> {
  const list = await requireOwnList(em, accountId, listId);
  return toListRecord(list, (await contactCounts(em, [list.id])).get(list.id) ?? 0);
}
