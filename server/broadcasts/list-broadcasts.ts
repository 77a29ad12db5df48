// The account's broadcasts, oldest first, a page at a time.
import type { EntityManager } from '@mikro-orm/postgresql';
import { Broadcast } from '../db/entities/index.ts';
import { readPage, writePage, type PageInput } from '../pagination.ts';
import type { Secrets } from '../secrets.ts';
import { toBroadcastRecord, type BroadcastRecord } from './broadcast-record.ts';

export async function listBroadcasts(
  em: EntityManager,
  secrets: Secrets,
  accountId: string,
  input: PageInput,
): Promise<{ broadcasts: BroadcastRecord[]; next_cursor: string | null }> {
  const scope = `broadcasts:${accountId}`;
  const page = readPage(secrets, scope, input);
  const rows = await em.find(
    Broadcast,
    { account: accountId, ...(page.after ? { id: { $gt: page.after } } : {}) },
    { orderBy: { id: 'asc' }, limit: page.limit + 1 },
  );
  const { items, next_cursor } = writePage(secrets, scope, rows, page.limit, (row) => row.id);
  return { broadcasts: items.map(toBroadcastRecord), next_cursor };
}
