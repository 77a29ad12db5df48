// The account's main API key: full access, one per account. Only its HMAC is
// used for lookup; the retrievable copy is stored sealed (AES-256-GCM).
import type { EntityManager } from '@mikro-orm/postgresql';
import { ApiKey } from '../db/entities/index.ts';
import { newId } from '../db/ids.ts';
import { maskKey, mintKeyValue } from '../auth/key-format.ts';
import type { Secrets } from '../secrets.ts';

/** Creates a main key for an account that has none; returns the key value (shown once). */
export async function issueMainKey(em: EntityManager, secrets: Secrets, accountId: string): Promise<string> {
  const value = mintKeyValue('main');
  em.persist(
    em.create(ApiKey, {
      id: newId('mkey'),
      account: accountId,
      kind: 'main',
      keyHash: secrets.hashApiKey(value),
      keyCiphertext: secrets.seal(value),
      keyPreview: maskKey(value),
    }),
  );
  await em.flush();
  return value;
}
