// GET /lists: the account's lists, oldest first, a page at a time.
import type { EntityManager } from '@mikro-orm/postgresql';
import { List } from '../db/entities/index.ts';
import { findEntityPage, type PageInput } from '../pagination.ts';
import type { Secrets } from '../secrets.ts';
import { contactCounts, toListRecord, type ListRecord } from './list-record.ts';

export async function listLists(
  em: EntityManager,
  secrets: Secrets,
  accountId: string,
  input: PageInput,
): Promise<{ lists: ListRecord[]; next_cursor: string | null }> {
  const { items, next_cursor } = await findEntityPage(em, List, { account: accountId }, secrets, `lists:${accountId}`, input);
  const counts = await contactCounts(em, items.map((list) => list.id));
  return { lists: items.map((list) => toListRecord(list, counts.get(list.id) ?? 0)), next_cursor };
}
