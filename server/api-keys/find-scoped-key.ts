// A scoped key of the account acted on; anything else is not found.
import type { EntityManager } from '@mikro-orm/postgresql';
import { ApiKey } from '../db/entities/index.ts';
import { NotFoundError } from '../errors.ts';

export async function requireScopedKey(em: EntityManager, accountId: string, id: string): Promise<ApiKey> {
  const key = id.startsWith('key_') ? await em.findOne(ApiKey, { id, account: accountId, kind: 'scoped' }) : null;
  if (!key) throw new NotFoundError('API key not found');
  return key;
}
