// PUT /lists/{id}: rename a list or change its description.
import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { flushOwned } from '../db/update-owned.ts';
import { NON_BLANK_TEXT_PATTERN } from '../input-rules.ts';
import { InvalidInputError } from '../errors.ts';
import { getList } from './find-list.ts';
import { requireOwnList } from './list-access.ts';
import type { ListRecord } from './list-record.ts';

export const ListUpdateInput = z.object({
  name: z.string().trim().min(1, 'name must not be empty').max(200).meta({ pattern: NON_BLANK_TEXT_PATTERN }).optional(),
  description: z.string().max(2000).nullable().optional(),
});
export type ListUpdateInput = z.infer<typeof ListUpdateInput>;

export async function updateList(em: EntityManager, accountId: string, listId: string, input: ListUpdateInput): Promise<ListRecord> {
  if (input.name === undefined && input.description === undefined) throw new InvalidInputError('No fields to update', { reason: 'no_fields' });
  const list = await requireOwnList(em, accountId, listId);
  if (input.name !== undefined) list.name = input.name;
  if (input.description !== undefined) list.description = input.description;
  await flushOwned(em, list);
  return getList(em, accountId, listId);
}
