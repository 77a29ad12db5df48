// Records one sending round in one transaction: the attempt rows (delivery log), each
// delivery's next state (succeeded, failed, dropped, or pending with its next attempt),
// the health of every (subscription, account) touched, and wake-ups for the retries.
import type pg from 'pg';
import { newId } from '../db/ids.ts';
import type { OutboundResult } from '../outbound/http-client.ts';
import type { ClaimedDelivery } from './sql/claim-due-deliveries.ts';
import { insertAttempts, updateDeliveries, type AttemptRow, type DeliveryUpdate } from './sql/record-attempts.ts';
import { updateHealth, type HealthChange } from './sql/update-health.ts';
import { wakeSenderAt } from './sql/wake-sender.ts';
import { withPoolTransaction } from '../db/pool-transaction.ts';

export type DeliveryOutcome =
  | { delivery: ClaimedDelivery; dropped: string }
  | { delivery: ClaimedDelivery; attemptedAtMs: number; result: OutboundResult };

/** Delivery rule 2: 5xx, time-outs and connection failures are retried; any 4xx is not. */
const RETRYABLE = new Set(['temporary', 'timeout', 'network']);

export async function recordDeliveryOutcomes(
  deps: { pool: pg.Pool; retrySchedule: readonly number[]; disableAfter: number },
  outcomes: DeliveryOutcome[],
): Promise<void> {
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
    attempts.push({ id: newId('wha'), deliveryId: delivery.id, attempt: delivery.attempt, statusCode: result.statusCode, durationMs: result.durationMs, error });

    const update: DeliveryUpdate = { id: delivery.id, status: 'succeeded', attempts: delivery.attempt, attemptedAtMs, statusCode: result.statusCode, error, retryOffsetMs: null };
    if (result.failure) {
      const retryOffsetMs = delivery.retriesEnabled && RETRYABLE.has(result.failure.type) ? deps.retrySchedule[delivery.attempt - 1] : undefined;
      if (retryOffsetMs !== undefined) {
        update.status = 'pending';
        update.retryOffsetMs = retryOffsetMs;
      } else {
        update.status = 'failed';
      }
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
    if (update.status === 'succeeded') {
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
        error: result.failure?.message ?? null,
        failure_type: result.failure?.type ?? 'unknown',
      };
    }
  }

  await withPoolTransaction(deps.pool, async (connection) => {
    await insertAttempts(connection, attempts);
    const retryMoments = await updateDeliveries(connection, updates);
    await updateHealth(connection, [...health.values()], deps.disableAfter);
    await wakeSenderAt(connection, retryMoments);
  });
}
