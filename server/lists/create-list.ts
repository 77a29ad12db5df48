// POST /lists.
import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { NON_BLANK_TEXT_PATTERN } from '../input-rules.ts';
import { List } from '../db/entities/index.ts';
import { newId } from '../db/ids.ts';
import { toListRecord, type ListRecord } from './list-record.ts';

export const ListCreateInput = z.object({
  name: z.string({ error: 'name is required' }).trim().min(1, 'name is required').max(200).meta({ pattern: NON_BLANK_TEXT_PATTERN }),
  description: z.string().max(2000).nullable().optional(),
});
export type ListCreateInput = z.infer<typeof ListCreateInput>;

export async function createList(em: EntityManager, accountId: string, input: ListCreateInput): Promise<ListRecord> {
  const list = em.create(List, { id: newId('lst'), account: accountId, name: input.name, description: input.description ?? null });
  await em.persist(list).flush();
  return toListRecord(list, 0);
}
