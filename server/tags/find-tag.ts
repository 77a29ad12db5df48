// One tag of the account acted on, by name; another account's tag is not found.
import type { EntityManager } from '@mikro-orm/postgresql';
import { Tag } from '../db/entities/index.ts';
import { NotFoundError } from '../errors.ts';
import { toTagRecord, type TagRecord } from './tag-record.ts';

export async function getTagByName(em: EntityManager, accountId: string, name: string): Promise<TagRecord> {
  const tag = await em.findOne(Tag, { account: accountId, name });
  if (!tag) throw new NotFoundError('Tag not found');
  return toTagRecord(tag);
}
