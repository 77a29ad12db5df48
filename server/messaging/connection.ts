// An account's messaging-provider connection: connect (check the credentials with the
// provider, then store them, the token only sealed), read its status, disconnect, and load
// the credentials for a provider call. The token is never logged and never returned: status
// answers carry only the ids.
import { UniqueConstraintViolationException, type EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { MessagingConnection } from '../db/entities/index.ts';
import { ApiError, ConflictError } from '../errors.ts';
import type { Secrets } from '../secrets.ts';
import type { ConnectionProblem, MessagingProvider } from './provider.ts';
import { requestTemplateSync } from './request-template-sync.ts';

// Callers that send look credentials up here too.
export { loadProviderCredentials, missingCredentialsError, requireProviderCredentials } from './provider-credentials.ts';

const ProviderId = (field: string) =>
  z
    .string()
    .trim()
    .min(1, `${field} must not be empty`)
    .max(128, `${field} must be at most 128 characters`)
    // It becomes a path segment of provider URLs: the provider's ids are digits, and anything
    // else ("." or "..", say) could name another path of the provider.
    .regex(/^[0-9]+$/, `${field} must be the messaging provider's id: digits only`);

export const MessagingConnectionInput = z.object({
  phone_number_id: ProviderId('phone_number_id'),
  business_account_id: ProviderId('business_account_id').nullish(),
  access_token: z
    .string()
    .trim()
    .min(1, 'access_token must not be empty')
    .max(4096, 'access_token must be at most 4096 characters')
    // It travels in the Authorization header, which carries only visible ASCII.
    .regex(/^[\x21-\x7E]+$/, 'access_token may hold only visible ASCII characters (no spaces)'),
});
export type MessagingConnectionInput = z.infer<typeof MessagingConnectionInput>;

export const MessagingConnectionStatus = z.object({
  connected: z.boolean(),
  phone_number_id: z.string().nullable(),
  business_account_id: z.string().nullable(),
});
export type MessagingConnectionStatus = z.infer<typeof MessagingConnectionStatus>;

const NOT_CONNECTED: MessagingConnectionStatus = { connected: false, phone_number_id: null, business_account_id: null };

function toStatus(connection: MessagingConnection | null): MessagingConnectionStatus {
  if (!connection) return { ...NOT_CONNECTED };
  return { connected: true, phone_number_id: connection.phoneNumberId, business_account_id: connection.businessAccountId ?? null };
}

function numberTaken(): ConflictError {
  return new ConflictError('That phone_number_id is already connected to another account');
}

/** Status of a refused connection: the credentials did not verify (422), or the provider could not be asked (502). */
const STATUS_BY_PROBLEM: Record<ConnectionProblem, number> = {
  token_refused: 422,
  phone_number_unreachable: 422,
  business_account_unreachable: 422,
  phone_number_not_in_business_account: 422,
  provider_unavailable: 502,
};
export const PROVIDER_CHECK_UNAVAILABLE = 'The messaging provider could not be reached to check the credentials; nothing was stored, try again later';

/**
 * Provider callbacks are routed by the phone number, so a number is stored only with a token
 * the provider accepts for it. Checked before anything else, so that the 409 below answers
 * only someone who holds the number, and tells a prober nothing.
 */
async function verifyWithProvider(messaging: MessagingProvider, input: MessagingConnectionInput): Promise<void> {
  const check = await messaging.checkConnection({
    phoneNumberId: input.phone_number_id,
    businessAccountId: input.business_account_id ?? null,
    accessToken: input.access_token,
  });
  if (check.ok) return;
  const status = STATUS_BY_PROBLEM[check.problem];
  throw new ApiError(status, status === 502 ? PROVIDER_CHECK_UNAVAILABLE : check.message, {
    code: check.problem,
    reason: check.problem,
    // The provider's own failure, not the service's: worth a warning, not an error with a stack.
    outside: status === 502 ? check.message : undefined,
  });
}

/**
 * Checks the credentials with the provider, then stores (or replaces) them and queues a
 * template sync in the same transaction.
 */
export async function connectMessagingProvider(
  em: EntityManager,
  deps: { secrets: Secrets; messaging: MessagingProvider },
  accountId: string,
  input: MessagingConnectionInput,
): Promise<MessagingConnectionStatus> {
  const { secrets } = deps;
  await verifyWithProvider(deps.messaging, input);
  try {
    return await em.transactional(async (tx) => {
      const holder = await tx.findOne(MessagingConnection, { phoneNumberId: input.phone_number_id }, { fields: ['account'] });
      if (holder && holder.account.id !== accountId) throw numberTaken();
      const fields = {
        phoneNumberId: input.phone_number_id,
        businessAccountId: input.business_account_id ?? null,
        accessTokenSealed: secrets.seal(input.access_token),
      };
      let connection = await tx.findOne(MessagingConnection, { account: accountId });
      if (connection) tx.assign(connection, { ...fields, connectedAt: new Date() });
      else connection = tx.create(MessagingConnection, { account: accountId, ...fields });
      await tx.flush();
      await requestTemplateSync(tx, accountId);
      // No event: the specification announces no connection change.
      return toStatus(connection);
    });
  } catch (error) {
    // Two accounts connecting the same number at once: the unique index decides.
    if (error instanceof UniqueConstraintViolationException) throw numberTaken();
    throw error;
  }
}

export async function getMessagingConnection(em: EntityManager, accountId: string): Promise<MessagingConnectionStatus> {
  return toStatus(await em.findOne(MessagingConnection, { account: accountId }));
}

/** Removes the credentials; synced templates stay, and sends are refused until reconnected. */
export async function disconnectMessagingProvider(em: EntityManager, accountId: string): Promise<MessagingConnectionStatus> {
  await em.nativeDelete(MessagingConnection, { account: accountId });
  return { ...NOT_CONNECTED };
}
