// GET /api-keys: the account's scoped keys, newest first.
import type { EntityManager } from '@mikro-orm/postgresql';
import { ApiKey } from '../db/entities/index.ts';
import { toScopedKeyRecord, type ScopedKeyRecord } from './scoped-key-record.ts';

/** The listing shows at most this many keys, newest first (Limits). */
export const SCOPED_KEY_LISTING_LIMIT = 200;

export async function listScopedKeys(em: EntityManager, accountId: string): Promise<ScopedKeyRecord[]> {
  // Ids are time-ordered, so id order is creation order.
  const keys = await em.find(
    ApiKey,
    { account: accountId, kind: 'scoped' },
    { orderBy: { id: 'desc' }, limit: SCOPED_KEY_LISTING_LIMIT },
  );
  return keys.map(toScopedKeyRecord);
}
