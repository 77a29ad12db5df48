// How a list is shown: its fields and how many contacts it holds.
import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import type { List } from '../db/entities/index.ts';
import { queryRows, sql } from '../db/sql.ts';

export const ListRecord = z.object({
  id: z.string(),
  name: z.string(),
  description: z.string().nullable(),
  contact_count: z.number().int(),
  created_at: z.string(),
});
export type ListRecord = z.infer<typeof ListRecord>;

/** Contacts per list, one statement for a whole page of lists. */
export async function contactCounts(em: EntityManager, listIds: string[]): Promise<Map<string, number>> {
  if (listIds.length === 0) return new Map();
  const rows = await queryRows<{ list_id: string; count: string }>(
    em,
    sql`select list_id, count(*) as count from contact_lists where list_id = any(${listIds}::text[]) group by list_id`,
  );
  return new Map(rows.map((row) => [row.list_id, Number(row.count)]));
}

export function toListRecord(list: List, count: number): ListRecord {
  return {
    id: list.id,
    name: list.name,
    description: list.description ?? null,
    contact_count: count,
    created_at: list.createdAt.toISOString(),
  };
}
