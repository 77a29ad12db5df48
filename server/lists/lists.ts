// Lists of the account acted on: create, read, rename, delete, and page
// through a list's contacts. Another account's list is not found here.
import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { Contact, List } from '../db/entities/index.ts';
import { newId } from '../db/ids.ts';
import { queryRows, sql } from '../db/sql.ts';
import { InvalidInputError } from '../errors.ts';
import { readPage, writePage, type PageInput } from '../pagination.ts';
import type { Secrets } from '../secrets.ts';
import { toContactRecord, type ContactRecord } from '../contacts/contact-record.ts';
import { requireOwnList } from './list-access.ts';

export const ListCreateInput = z.object({
  name: z.string({ error: 'name is required' }).trim().min(1, 'name is required').max(200),
  description: z.string().max(2000).nullable().optional(),
});
export type ListCreateInput = z.infer<typeof ListCreateInput>;

export const ListUpdateInput = z.object({
  name: z.string().trim().min(1, 'name must not be empty').max(200).optional(),
  description: z.string().max(2000).nullable().optional(),
});
export type ListUpdateInput = z.infer<typeof ListUpdateInput>;

export type ListRecord = { id: string; name: string; description: string | null; contact_count: number; created_at: string };

async function contactCounts(em: EntityManager, listIds: string[]): Promise<Map<string, number>> {
  if (listIds.length === 0) return new Map();
  const rows = await queryRows<{ list_id: string; count: string }>(
    em,
    sql`select list_id, count(*) as count from contact_lists where list_id = any(${listIds}::text[]) group by list_id`,
  );
  return new Map(rows.map((row) => [row.list_id, Number(row.count)]));
}

function toListRecord(list: List, count: number): ListRecord {
  return {
    id: list.id,
    name: list.name,
    description: list.description ?? null,
    contact_count: count,
    created_at: list.createdAt.toISOString(),
  };
}

export async function createList(em: EntityManager, accountId: string, input: ListCreateInput): Promise<ListRecord> {
  const list = em.create(List, { id: newId('lst'), account: accountId, name: input.name, description: input.description ?? null });
  await em.persist(list).flush();
  return toListRecord(list, 0);
}

export async function getList(em: EntityManager, accountId: string, listId: string): Promise<ListRecord> {
  const list = await requireOwnList(em, accountId, listId);
  return toListRecord(list, (await contactCounts(em, [list.id])).get(list.id) ?? 0);
}

export async function updateList(em: EntityManager, accountId: string, listId: string, input: ListUpdateInput): Promise<ListRecord> {
  if (input.name === undefined && input.description === undefined) throw new InvalidInputError('No fields to update', { reason: 'no_fields' });
  const list = await requireOwnList(em, accountId, listId);
  if (input.name !== undefined) list.name = input.name;
  if (input.description !== undefined) list.description = input.description;
  await em.flush();
  return getList(em, accountId, listId);
}

export async function deleteList(em: EntityManager, accountId: string, listId: string): Promise<void> {
  const list = await requireOwnList(em, accountId, listId);
  await em.remove(list).flush();
}

export async function listLists(
  em: EntityManager,
  secrets: Secrets,
  accountId: string,
  input: PageInput,
): Promise<{ lists: ListRecord[]; next_cursor: string | null }> {
  const scope = `lists:${accountId}`;
  const page = readPage(secrets, scope, input);
  const rows = await em.find(
    List,
    { account: accountId, ...(page.after ? { id: { $gt: page.after } } : {}) },
    { orderBy: { id: 'asc' }, limit: page.limit + 1 },
  );
  const { items, next_cursor } = writePage(secrets, scope, rows, page.limit, (row) => row.id);
  const counts = await contactCounts(em, items.map((list) => list.id));
  return { lists: items.map((list) => toListRecord(list, counts.get(list.id) ?? 0)), next_cursor };
}

export async function listListContacts(
  em: EntityManager,
  secrets: Secrets,
  accountId: string,
  listId: string,
  input: PageInput,
): Promise<{ contacts: ContactRecord[]; next_cursor: string | null }> {
  await requireOwnList(em, accountId, listId);
  const scope = `list-contacts:${accountId}:${listId}`;
  const page = readPage(secrets, scope, input);
  const idRows = await queryRows<{ id: string }>(
    em,
    sql`select cl.contact_id as id from contact_lists cl
     where cl.list_id = ${listId} and cl.account_id = ${accountId} and (${page.after}::text is null or cl.contact_id > ${page.after}::text)
     order by cl.contact_id limit ${page.limit + 1}`,
  );
  const ids = idRows.map((row) => row.id);
  const rows = ids.length ? await em.find(Contact, { id: { $in: ids }, account: accountId }, { orderBy: { id: 'asc' } }) : [];
  const { items, next_cursor } = writePage(secrets, scope, rows, page.limit, (row) => row.id);
  return { contacts: items.map(toContactRecord), next_cursor };
}
