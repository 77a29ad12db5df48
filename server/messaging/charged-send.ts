// A provider send that costs credits, all or nothing: the credits are reserved before the
// call and released when the provider refuses or fails, and the message is recorded with
// the charge once the provider took it, so the account is charged exactly when a message
// went out and nothing is recorded otherwise. Template sends and session messages (replies)
// both go through here.
import type { EntityManager } from '@mikro-orm/postgresql';
import { releaseCreditReservation, reserveCredits, settleCreditReservation, type SpendReason } from '../credits/spend-credits.ts';
import type { Services } from '../process-services.ts';
import type { ProviderSendResult } from './provider.ts';
import { providerSendFailure } from './provider-send-failure.ts';

export { PROVIDER_UNAVAILABLE } from './provider-send-failure.ts';

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
    throw providerSendFailure(result);
  }
  const providerMessageId = result.providerMessageId;
  // The message, its charge and their events commit together, once the provider took it.
  return em.transactional(async (tx) => {
    const recorded = await charged.record(tx, providerMessageId);
    await settleCreditReservation(tx, reservation, charged.reason);
    return recorded;
  });
}
