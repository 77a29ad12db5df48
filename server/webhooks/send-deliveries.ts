// Sending: claims due deliveries in rounds, makes one HTTP attempt for each through the
// outbound client (concurrently), and records the round's outcomes in one transaction.
// At send time the subscription is checked again: switched off, or its URL auto-disabled
// for the account, drops the delivery (Delivery rules 1 and 4).
import type pg from 'pg';
import type { Logger } from 'pino';
import type { OutboundClient, OutboundResult } from '../outbound/http-client.ts';
import type { Secrets } from '../secrets.ts';
import { deliveryHeaders } from './signature.ts';
import { recordDeliveryOutcomes, type DeliveryOutcome } from './record-delivery-outcomes.ts';
import { claimDueDeliveries, type ClaimedDelivery } from './sql/claim-due-deliveries.ts';
import { wakeSenderAt } from './sql/wake-sender.ts';
import { withPoolTransaction } from '../db/pool-transaction.ts';

/** Deliveries claimed per round; equal to the per-origin concurrency, so none of a round waits for another of it. */
export const SEND_BATCH_SIZE = 64;
/** Rounds that may run at once in one process (Graphile Worker's concurrency). */
const CONCURRENT_ROUNDS = 4;
const LEASE_MARGIN_MS = 5_000;

export type SenderDeps = {
  pool: pg.Pool;
  client: OutboundClient;
  secrets: Secrets;
  log: Logger;
  timeoutMs: number;
  retrySchedule: readonly number[];
  disableAfter: number;
};

/** Options for the process's one outbound client, matched to the batch size and the lease. */
export const SENDER_CLIENT_LIMITS = { maxConcurrentPerOrigin: SEND_BATCH_SIZE, maxConcurrent: SEND_BATCH_SIZE * CONCURRENT_ROUNDS + 1 };

/**
 * How long a claimed delivery stays leased: its own attempt may wait behind the other rounds'
 * attempts to the same origin, each bounded by the time-out.
 */
export function leaseMs(timeoutMs: number): number {
  return timeoutMs * CONCURRENT_ROUNDS + LEASE_MARGIN_MS;
}

/** Sends every due delivery, a round at a time, until none is left; returns how many were handled. */
export async function sendDueDeliveries(deps: SenderDeps): Promise<number> {
  let handled = 0;
  for (;;) {
    const round = await sendRound(deps);
    handled += round;
    if (round < SEND_BATCH_SIZE) return handled;
  }
}

async function sendRound(deps: SenderDeps): Promise<number> {
  const deliveries = await claim(deps);
  if (deliveries.length === 0) return 0;

  const secretsBySubscription = new Map<string, string | null>();
  const outcomes: DeliveryOutcome[] = [];
  await Promise.all(
    deliveries.map(async (delivery) => {
      if (!delivery.enabled || delivery.urlDisabled) {
        outcomes.push({ delivery, dropped: delivery.enabled ? 'url auto-disabled' : 'subscription switched off' });
        return;
      }
      const attemptedAtMs = Date.now();
      const result = await attempt(deps, delivery, secretsBySubscription, attemptedAtMs);
      // Kept in completion order: health counts consecutive failures in that order.
      outcomes.push({ delivery, attemptedAtMs, result });
    }),
  );
  await recordDeliveryOutcomes(deps, outcomes);
  deps.log.debug({ deliveries: deliveries.length }, 'webhook round sent');
  return deliveries.length;
}

/** Claims a round and, in the same transaction, a wake-up at lease expiry in case this process dies mid-round. */
async function claim(deps: SenderDeps): Promise<ClaimedDelivery[]> {
  return withPoolTransaction(deps.pool, async (connection) => {
    const { deliveries, leaseUntilMs } = await claimDueDeliveries(connection, SEND_BATCH_SIZE, leaseMs(deps.timeoutMs));
    if (leaseUntilMs !== null) await wakeSenderAt(connection, [leaseUntilMs]);
    return deliveries;
  });
}

async function attempt(
  deps: SenderDeps,
  delivery: ClaimedDelivery,
  secretsBySubscription: Map<string, string | null>,
  attemptedAtMs: number,
): Promise<OutboundResult> {
  let secret = secretsBySubscription.get(delivery.subscriptionId);
  if (secret === undefined) {
    try {
      secret = delivery.signingSecretSealed === null ? null : deps.secrets.unseal(delivery.signingSecretSealed);
    } catch {
      return { delivered: false, statusCode: null, durationMs: 0, failure: { type: 'unknown', message: 'the signing secret cannot be opened' } };
    }
    secretsBySubscription.set(delivery.subscriptionId, secret);
  }
  const headers = deliveryHeaders({
    deliveryId: delivery.id,
    attempt: delivery.attempt,
    event: delivery.eventName,
    secret,
    body: delivery.body,
    timestamp: Math.floor(attemptedAtMs / 1000),
  });
  // The request that caused the event, so the receiver can quote it to us.
  if (delivery.requestId) headers['X-Request-Id'] = delivery.requestId;
  return deps.client.post(delivery.url, { headers, body: delivery.body });
}
