// One broadcast of the account acted on.
import type { EntityManager } from '@mikro-orm/postgresql';
import { Broadcast } from '../db/entities/index.ts';
import { NotFoundError } from '../errors.ts';
import { toBroadcastRecord, type BroadcastRecord } from './broadcast-record.ts';

/** Another account's broadcast is not found. */
export async function getBroadcast(em: EntityManager, accountId: string, broadcastId: string): Promise<BroadcastRecord> {
  const broadcast = await em.findOne(Broadcast, { id: broadcastId, account: accountId });
  if (!broadcast) throw new NotFoundError('Broadcast not found');
  return toBroadcastRecord(broadcast);
}
