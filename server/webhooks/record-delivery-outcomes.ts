// Records one sending round in one transaction: the attempt rows (delivery log), each
// delivery's next state, the health of every (subscription, account) touched, and
// wake-ups for the retries, as planDeliveryOutcomes decided them.
import type pg from 'pg';
import { withPoolTransaction } from '../db/pool-transaction.ts';
import { planDeliveryOutcomes, type DeliveryOutcome } from './plan-delivery-outcomes.ts';
import { insertAttempts, updateDeliveries } from './sql/record-attempts.ts';
import { updateHealth } from './sql/update-health.ts';
import { wakeSenderAt } from './sql/wake-sender.ts';

export type { DeliveryOutcome } from './plan-delivery-outcomes.ts';

export async function recordDeliveryOutcomes(
  deps: { pool: pg.Pool; retrySchedule: readonly number[]; disableAfter: number },
  outcomes: DeliveryOutcome[],
): Promise<void> {
  const plan = planDeliveryOutcomes(outcomes, deps.retrySchedule);
  await withPoolTransaction(deps.pool, async (connection) => {
    await insertAttempts(connection, plan.attempts);
    const retryMoments = await updateDeliveries(connection, plan.updates);
    await updateHealth(connection, plan.health, deps.disableAfter);
    await wakeSenderAt(connection, retryMoments);
  });
}
