// Dispatch: turns committed events into deliveries, and makes each delivery's first attempt on
// the way. A round claims a batch of undispatched events (their row locks, held by the round's
// transaction, are its only lease), finds the subscriptions each goes to in the same
// statement, sends the first attempts, and then, on that transaction, writes the attempts,
// each delivery still to send or replay in the state its attempt left it, the retries'
// wake-ups and the health, and marks the events dispatched. A delivery whose first attempt
// succeeds is written as that attempt alone: no delivery row, no claim, no update. Retries
// are the sender's (send-deliveries.ts).
//
// Crash safety is the sender's: a round cut off before its commit leaves its events
// undispatched and unlocked, and the next round sends them again with the same delivery ids,
// which are derived from what they deliver (the event, the subscription, the account), not
// drawn at random (at least once; Delivery rule 3).
//
// Rounds run in passes of lanes as the sender's do (sending-pass.ts). A round claims as many
// events as make about one sender's batch of deliveries at the fan-out of the round before;
// should an event go to more subscriptions than that, the round sends a batch and queues the
// rest pending, due now, for the sender.
import type pg from 'pg';
import { derivedId } from '../db/ids.ts';
import { openPoolTransaction } from '../db/pool-transaction.ts';
import { planDeliveryOutcomes, type DeliveryOutcome } from './plan-delivery-outcomes.ts';
import { CONCURRENT_ROUNDS, recordAndEnd, roundBegin, SEND_BATCH_SIZE, sendAll, type SenderDeps } from './send-deliveries.ts';
import { runOrJoinPass } from './sending-pass.ts';
import { claimEventRoutes, type EventRoute } from './sql/claim-events.ts';
import type { ClaimedDelivery } from './sql/claim-due-deliveries.ts';
import { insertAttempts } from './sql/record-attempts.ts';
import { updateHealth } from './sql/update-health.ts';
import { wakeSenderAt, wakeSenderNow } from './sql/wake-sender.ts';
import { writeDeliveries, type WrittenDelivery } from './sql/write-deliveries.ts';

/** Most events one round claims (at a fan-out of one delivery each). */
export const DISPATCH_BATCH_SIZE = SEND_BATCH_SIZE;

/**
 * Dispatches every undispatched event in a pass of rounds, or joins the pass running in this
 * process (and returns 0 at once); returns how many events the pass dispatched.
 */
export function dispatchEvents(deps: SenderDeps): Promise<number> {
  return runOrJoinPass(deps.state.dispatchPasses, (claimed) => dispatchRound(deps, claimed), { batchSize: DISPATCH_BATCH_SIZE, maxLanes: CONCURRENT_ROUNDS });
}

/** Events to claim for about one batch of deliveries at the fan-out last seen. */
function eventsPerRound(fanOut: number): number {
  return Math.max(1, Math.min(DISPATCH_BATCH_SIZE, Math.floor(SEND_BATCH_SIZE / Math.max(fanOut, 1))));
}

/** The delivery of an event to a subscription: what its first attempt sends, with its id derived from what it delivers. */
function deliveryOf(deps: SenderDeps, route: EventRoute, subscriptionId: string): ClaimedDelivery {
  const bits = deps.secrets.idBits(`webhook-delivery\n${route.eventId}\n${subscriptionId}\n${route.accountId}`);
  return {
    id: derivedId('dlv', route.eventId, bits),
    eventId: route.eventId,
    subscriptionId,
    accountId: route.accountId,
    attempt: 1,
    eventName: route.eventName,
    body: route.body,
    url: route.url!,
    enabled: true,
    retriesEnabled: route.retriesEnabled!,
    signingSecretSealed: route.signingSecretSealed,
    urlDisabled: false,
    requestId: route.requestId,
  };
}

async function dispatchRound(deps: SenderDeps, claimed: (count: number, full?: boolean) => void): Promise<{ count: number; full: boolean; recorded: Promise<void> }> {
  const limit = eventsPerRound(deps.state.fanOut);
  // The claim goes with the BEGIN: a look that finds nothing is two round trips, this and the COMMIT.
  const round = await openPoolTransaction(deps.pool, { begin: roundBegin(deps), with: [claimEventRoutes(limit)] });
  let eventIds: string[];
  let deliveries: ClaimedDelivery[];
  let outcomes: DeliveryOutcome[];
  let full: boolean;
  try {
    const routes = round.opened[0]!.rows as EventRoute[];
    eventIds = [...new Set(routes.map((route) => route.eventId))];
    deliveries = routes.flatMap((route) => (route.subscriptionId === null ? [] : [deliveryOf(deps, route, route.subscriptionId)]));
    if (eventIds.length > 0) deps.state.fanOut = deliveries.length / eventIds.length;
    full = eventIds.length >= limit;
    claimed(eventIds.length, full);
    if (eventIds.length === 0) {
      await round.end();
      return { count: 0, full: false, recorded: Promise.resolve() };
    }
    outcomes = await sendAll(deps, deliveries.slice(0, SEND_BATCH_SIZE));
  } catch (error) {
    // end() rethrows it, after the rollback.
    await round.end(error);
    throw error;
  }
  const recorded = recordAndEnd(round, () => recordRound(round.client, deps, deliveries, outcomes, eventIds));
  deps.log.debug({ events: eventIds.length, deliveries: deliveries.length }, 'webhook events dispatched');
  return { count: eventIds.length, full, recorded };
}

/**
 * Writes a round: the deliveries still to send or replay (those whose first attempt failed,
 * in the state it left them, and those not attempted, due now), then the attempts, the
 * wake-ups, and last the health (concurrent rounds wait on the health rows they share).
 */
async function recordRound(
  connection: pg.PoolClient,
  deps: SenderDeps,
  deliveries: ClaimedDelivery[],
  outcomes: DeliveryOutcome[],
  eventIds: string[],
): Promise<void> {
  let plan = planDeliveryOutcomes(outcomes, deps.retrySchedule);
  const byId = new Map(plan.updates.map((update) => [update.id, update]));
  const rows: WrittenDelivery[] = [];
  for (const delivery of deliveries) {
    const outcome = byId.get(delivery.id) ?? null;
    // A success is its attempt row alone.
    if (outcome?.status === 'succeeded') continue;
    rows.push({ id: delivery.id, eventId: delivery.eventId, subscriptionId: delivery.subscriptionId, accountId: delivery.accountId, outcome });
  }
  const written = await writeDeliveries(connection, rows, eventIds);
  // One already written (by a dispatch of an earlier version that queued it) keeps its own state
  // and attempts; a success is not written, so such a row is sent again by the sender (at least once).
  if (written.ids.size < rows.length) {
    const kept = new Set(rows.flatMap((row) => (written.ids.has(row.id) ? [] : [row.id])));
    plan = planDeliveryOutcomes(outcomes.filter((outcome) => !kept.has(outcome.delivery.id)), deps.retrySchedule);
  }
  await insertAttempts(connection, plan.attempts);
  if (written.dueNow) await wakeSenderNow(connection);
  await wakeSenderAt(connection, written.retryMoments);
  await updateHealth(connection, plan.health, deps.disableAfter);
}
