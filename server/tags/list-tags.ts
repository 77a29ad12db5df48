// GET /tags: the account's tags, by name.
import type { EntityManager } from '@mikro-orm/postgresql';
import { Tag } from '../db/entities/index.ts';
import { toTagRecord, type TagRecord } from './tag-record.ts';

export async function listTags(em: EntityManager, accountId: string): Promise<TagRecord[]> {
  const tags = await em.find(Tag, { account: accountId }, { orderBy: { name: 'asc', id: 'asc' } });
  return tags.map(toTagRecord);
}
