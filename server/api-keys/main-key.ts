// The account's main API key: full access, one per account. Only its HMAC is
// used for lookup; the retrievable copy is stored sealed (AES-256-GCM). Every
// request confirms the key live (a process holding it checks it by id, HMAC and
// credential_version: server/auth/credential-cache.ts), so rotating or revoking
// takes effect on the very next request, and live subscriptions hear of it
// (server/auth/credential-changes.ts).
import type { EntityManager } from '@mikro-orm/postgresql';
import { ApiKey } from '../db/entities/index.ts';
import { newId } from '../db/ids.ts';
import { announceCredentialChange } from '../auth/credential-changes.ts';
import { maskKey, mintKeyValue } from '../auth/key-format.ts';
import { NotFoundError } from '../errors.ts';
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

export type MainKeyMetadata = { api_key: string | null; api_key_masked: string; created_at: string };

function noMainKey(): NotFoundError {
  return new NotFoundError('No API key found for this account');
}

export async function getMainKey(em: EntityManager, secrets: Secrets, accountId: string): Promise<MainKeyMetadata> {
  const key = await em.findOne(ApiKey, { account: accountId, kind: 'main' });
  if (!key) throw noMainKey();
  return {
    // Keys created before retrievable copies were kept have no sealed copy.
    api_key: key.keyCiphertext ? secrets.unseal(key.keyCiphertext) : null,
    api_key_masked: key.keyPreview,
    created_at: key.createdAt.toISOString(),
  };
}

/**
 * Replaces the main key's value in place (same row, so its rate-limit budget
 * carries over). An account whose main key was revoked gets a new one: only an
 * owner session can ask for that, since no key of the account works any more.
 */
export async function rotateMainKey(em: EntityManager, secrets: Secrets, accountId: string): Promise<string> {
  return em.transactional(async (tx) => {
    const value = mintKeyValue('main');
    const replaced = await tx.nativeUpdate(
      ApiKey,
      { account: accountId, kind: 'main' },
      { keyHash: secrets.hashApiKey(value), keyCiphertext: secrets.seal(value), keyPreview: maskKey(value), createdAt: new Date() },
    );
    if (replaced === 0) return issueMainKey(tx, secrets, accountId);
    await announceCredentialChange(tx, accountId);
    return value;
  });
}

/** Deletes the main key: no replacement, no undo. */
export async function revokeMainKey(em: EntityManager, accountId: string): Promise<void> {
  await em.transactional(async (tx) => {
    const deleted = await tx.nativeDelete(ApiKey, { account: accountId, kind: 'main' });
    if (deleted === 0) throw noMainKey();
    await announceCredentialChange(tx, accountId);
  });
}
