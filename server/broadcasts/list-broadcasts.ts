// The account's broadcasts, oldest first, a page at a time.
import type { EntityManager } from '@mikro-orm/postgresql';
import { Broadcast } from '../db/entities/index.ts';
import { findEntityPage, type PageInput } from '../pagination.ts';
import type { Secrets } from '../secrets.ts';
import { toBroadcastRecord, type BroadcastRecord } from './broadcast-record.ts';

export async function listBroadcasts(
  em: EntityManager,
  secrets: Secrets,
  accountId: string,
  input: PageInput,
): Promise<{ broadcasts: BroadcastRecord[]; next_cursor: string | null }> {
  const { items, next_cursor } = await findEntityPage(em, Broadcast, { account: accountId }, secrets, `broadcasts:${accountId}`, input);
  return { broadcasts: items.map(toBroadcastRecord), next_cursor };
}
