// The one place a provider call gets the account's credentials, unsealing the token
// only for the call that needs it.
import type { EntityManager } from '@mikro-orm/postgresql';
import { MessagingConnection } from '../db/entities/index.ts';
import { ForbiddenError } from '../errors.ts';
import type { Secrets } from '../secrets.ts';
import type { ProviderCredentials } from './provider.ts';

export async function loadProviderCredentials(em: EntityManager, secrets: Secrets, accountId: string): Promise<ProviderCredentials | null> {
  const connection = await em.findOne(MessagingConnection, { account: accountId });
  if (!connection) return null;
  return {
    phoneNumberId: connection.phoneNumberId,
    businessAccountId: connection.businessAccountId ?? null,
    accessToken: secrets.unseal(connection.accessTokenSealed),
  };
}

/** The 403 of POST /whatsapp-templates/send (and other provider calls) when no credentials are stored. */
export function missingCredentialsError(): ForbiddenError {
  return new ForbiddenError('Connect a messaging provider account before sending templates');
}

/** The credentials, or the 403 the specification gives a send without them. */
export async function requireProviderCredentials(em: EntityManager, secrets: Secrets, accountId: string): Promise<ProviderCredentials> {
  const credentials = await loadProviderCredentials(em, secrets, accountId);
  if (!credentials) throw missingCredentialsError();
  return credentials;
}
