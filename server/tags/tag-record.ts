// How a tag is shown.
import { z } from 'zod';
import type { Tag } from '../db/entities/index.ts';

export const TagRecord = z.object({ id: z.string(), name: z.string(), description: z.string().nullable() });
export type TagRecord = z.infer<typeof TagRecord>;

export function toTagRecord(tag: Tag): TagRecord {
  return { id: tag.id, name: tag.name, description: tag.description ?? null };
}
