// What one sending round means, decided without the database: the attempt rows for the
// delivery log, each delivery's next state (succeeded, failed, dropped, or pending with the
// offset of its next attempt from the first), and the health change of every
// (subscription, account) touched. record-delivery-outcomes.ts writes the plan.
import { newId } from '../db/ids.ts';
import type { OutboundFailureType, OutboundResult } from '../outbound/http-client.ts';
import type { ClaimedDelivery } from './sql/claim-due-deliveries.ts';
import type { AttemptRow, DeliveryUpdate } from './sql/record-attempts.ts';
import type { HealthChange } from './sql/update-health.ts';

export type DeliveryOutcome =
  | { delivery: ClaimedDelivery; dropped: string }
  | { delivery: ClaimedDelivery; attemptedAtMs: number; result: OutboundResult };

export type DeliveryPlan = { attempts: AttemptRow[]; updates: DeliveryUpdate[]; health: HealthChange[] };

/** Delivery rule 2: 5xx, time-outs and connection failures are retried; any 4xx is not. */
const RETRYABLE: ReadonlySet<OutboundFailureType> = new Set(['temporary', 'timeout', 'network']);

/**
 * The offset from the first attempt at which a failed attempt is tried again, or null when it
 * is not: retries opted in, a retryable failure, and a schedule entry left for this attempt
 * (`schedule[0]` follows attempt 1). The database adds it to the first attempt's time.
 */
export function retryOffsetFor(
  delivery: Pick<ClaimedDelivery, 'attempt' | 'retriesEnabled'>,
  failure: { type: OutboundFailureType },
  schedule: readonly number[],
): number | null {
  if (!delivery.retriesEnabled || !RETRYABLE.has(failure.type)) return null;
  return schedule[delivery.attempt - 1] ?? null;
}

export function planDeliveryOutcomes(outcomes: readonly DeliveryOutcome[], retrySchedule: readonly number[]): DeliveryPlan {
  const attempts: AttemptRow[] = [];
  const updates: DeliveryUpdate[] = [];
  const health = new Map<string, HealthChange>();

  for (const outcome of outcomes) {
    const { delivery } = outcome;
    if ('dropped' in outcome) {
      // Dropped deliveries are never replayed and never count in health (Delivery rule 4).
      updates.push({ id: delivery.id, status: 'dropped', attempts: null, attemptedAtMs: null, statusCode: null, error: `dropped: ${outcome.dropped}`, retryOffsetMs: null });
      continue;
    }
    const { result, attemptedAtMs } = outcome;
    const error = result.failure ? `${result.failure.type}: ${result.failure.message}` : null;
    attempts.push({ id: newId('wha'), deliveryId: delivery.id, eventId: delivery.eventId, accountId: delivery.accountId, subscriptionId: delivery.subscriptionId, attempt: delivery.attempt, statusCode: result.statusCode, durationMs: result.durationMs, error });

    const update: DeliveryUpdate = { id: delivery.id, status: 'succeeded', attempts: delivery.attempt, attemptedAtMs, statusCode: result.statusCode, error, retryOffsetMs: null };
    if (result.failure) {
      update.retryOffsetMs = retryOffsetFor(delivery, result.failure, retrySchedule);
      update.status = update.retryOffsetMs === null ? 'failed' : 'pending';
    }
    updates.push(update);
    if (update.status === 'pending') continue;

    // Health counts whole deliveries: a failure only once all retries are spent (Delivery rule 5).
    const key = `${delivery.subscriptionId}\n${delivery.accountId}`;
    let change = health.get(key);
    if (!change) {
      change = { subscriptionId: delivery.subscriptionId, accountId: delivery.accountId, successes: 0, failures: 0, trailingFailures: 0, lastSuccessAtMs: null, lastFailure: null };
      health.set(key, change);
    }
    if (!result.failure) {
      change.successes += 1;
      change.trailingFailures = 0;
      change.lastSuccessAtMs = attemptedAtMs + result.durationMs;
    } else {
      change.failures += 1;
      change.trailingFailures += 1;
      change.lastFailure = {
        at: new Date(attemptedAtMs + result.durationMs).toISOString(),
        delivery_id: delivery.id,
        event: delivery.eventName,
        status_code: result.statusCode,
        error: result.failure.message,
        failure_type: result.failure.type,
      };
    }
  }
  return { attempts, updates, health: [...health.values()] };
}
