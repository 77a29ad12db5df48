// Records one sending round on the round's own transaction (the one holding its
// deliveries' row locks, send-deliveries.ts): the attempt rows (delivery log), each
// delivery's next state, the health of every (subscription, account) touched, and
// wake-ups for the retries, as planDeliveryOutcomes decided them.
// The attempt rows are written before the deliveries are updated: their key to the delivery
// then finds the row version this transaction already locks, and its check locks nothing
// more (after the update it would lock the new version, a WAL record per attempt).
import type pg from 'pg';
import { planDeliveryOutcomes, type DeliveryOutcome } from './plan-delivery-outcomes.ts';
import { insertAttempts, updateDeliveries } from './sql/record-attempts.ts';
import { updateHealth } from './sql/update-health.ts';
import { wakeSenderAt } from './sql/wake-sender.ts';

export type { DeliveryOutcome } from './plan-delivery-outcomes.ts';

export async function recordDeliveryOutcomes(
  connection: pg.PoolClient,
  deps: { retrySchedule: readonly number[]; disableAfter: number },
  outcomes: DeliveryOutcome[],
): Promise<void> {
  const plan = planDeliveryOutcomes(outcomes, deps.retrySchedule);
  await insertAttempts(connection, plan.attempts);
  const retryMoments = await updateDeliveries(connection, plan.updates);
  await wakeSenderAt(connection, retryMoments);
  // Last: concurrent rounds wait on the health rows they share until this one commits.
  await updateHealth(connection, plan.health, deps.disableAfter);
}
