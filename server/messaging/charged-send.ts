// A provider send that costs credits, all or nothing: the credits are reserved before the
// call and released when the provider refuses or fails, and the message is recorded with
// the charge once the provider took it, so the account is charged exactly when a message
// went out and nothing is recorded otherwise. Template sends and session messages (replies)
// both go through here.
import type { EntityManager } from '@mikro-orm/postgresql';
import { releaseCreditReservation, reserveCredits, settleCreditReservation, type SpendReason } from '../credits/spend-credits.ts';
import { ApiError, InvalidInputError } from '../errors.ts';
import type { Services } from '../process-services.ts';
import type { ProviderSendResult } from './provider-client.ts';

export const PROVIDER_UNAVAILABLE = 'The messaging provider did not answer; nothing was sent or charged';

/** The provider's refusal as a send's 400 or 500 (the only failures the spec allows a send). */
function sendFailure(result: Extract<ProviderSendResult, { ok: false }>): ApiError {
  const refused = result.status !== null && result.status >= 400 && result.status < 500 && result.status !== 429;
  if (refused) return new InvalidInputError(result.message, { reason: 'provider_refused' });
  // Accepted without an id: the message may be on its way, so "nothing was sent" would be untrue.
  if (result.status !== null && result.status < 400) return new ApiError(500, result.message, { reason: 'provider_unreadable' });
  return new ApiError(500, PROVIDER_UNAVAILABLE, { reason: 'provider_unavailable', outside: result.message });
}

export type ChargedSend<T> = {
  accountId: string;
  credits: number;
  reason: SpendReason;
  /** The provider call. */
  send(): Promise<ProviderSendResult>;
  /** Records what went out, on the transaction that settles the charge. */
  record(tx: EntityManager, providerMessageId: string): Promise<T>;
  /** Log fields and message for a failed send. */
  about: Record<string, unknown>;
  failed: string;
};

export async function chargedProviderSend<T>(services: Services, em: EntityManager, charged: ChargedSend<T>): Promise<T> {
  // Reserved rather than spent in one transaction with the call, so the account row is
  // not locked while the provider answers (sends of one account would go one at a time).
  const reservation = await reserveCredits(em, charged.accountId, charged.credits);
  let result: ProviderSendResult;
  try {
    result = await charged.send();
  } catch (error) {
    await releaseCreditReservation(em, reservation);
    throw error;
  }
  if (!result.ok) {
    await releaseCreditReservation(em, reservation);
    services.log.warn({ accountId: charged.accountId, ...charged.about, status: result.status }, charged.failed);
    throw sendFailure(result);
  }
  const providerMessageId = result.providerMessageId;
  // The message, its charge and their events commit together, once the provider took it.
  return em.transactional(async (tx) => {
    const recorded = await charged.record(tx, providerMessageId);
    await settleCreditReservation(tx, reservation, charged.reason);
    return recorded;
  });
}
