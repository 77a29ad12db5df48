// Sending webhook deliveries: rounds claimed, attempted through the outbound client and
// recorded. A round is one transaction whose row locks are the only lease, so a worker that
// dies or hangs mid-round leaves its deliveries due again (at least once; docs/webhooks.md,
// Delivery). The subscription is checked again at send time (Delivery rules 1 and 4).
import type pg from 'pg';
import type { Logger } from 'pino';
import { openPoolTransaction, type OpenTransaction } from '../db/pool-transaction.ts';
import type { OutboundClient, OutboundResult } from '../outbound/http-client.ts';
import type { Secrets } from '../secrets.ts';
import { deliveryHeaders, signingKeys, type SigningKeys } from './signature.ts';
import { recordDeliveryOutcomes, type DeliveryOutcome } from './record-delivery-outcomes.ts';
import { claimDueDeliveries, type ClaimedDelivery } from './sql/claim-due-deliveries.ts';
import { wakeSenderAtIfDue, wakeUpBucket } from './sql/wake-sender.ts';
import { passState, runOrJoinPass, type PassState } from './sending-pass.ts';

/** Deliveries claimed per round; equal to the per-origin concurrency, so none of a round waits for another of it. */
export const SEND_BATCH_SIZE = 64;
/** Rounds (lanes of the pass) that may run at once in one process: this sender's, and as many of dispatch's first attempts (dispatch-events.ts). */
export const CONCURRENT_ROUNDS = 4;
const ALL_ROUNDS = 2 * CONCURRENT_ROUNDS;
const ROUND_MARGIN_MS = 5_000;

/** What the process's sender shares across runs of the task (senderState()). */
export type SenderState = {
  /** The pass running in this process, if any (sending-pass.ts). */
  passes: PassState;
  /** Second buckets whose wake-up (for a round cut off with this process) a commit of this process has added. */
  wakeUpsAdded: Set<number>;
  /** Dispatch's pass running in this process, if any (dispatch-events.ts). */
  dispatchPasses: PassState;
  /** Deliveries per event in dispatch's last round: how many events its next round claims. */
  fanOut: number;
};

export type SenderDeps = {
  pool: pg.Pool;
  state: SenderState;
  client: OutboundClient;
  secrets: Secrets;
  log: Logger;
  timeoutMs: number;
  retrySchedule: readonly number[];
  disableAfter: number;
};

/** Options for the process's one outbound client, matched to the batch size and the round limit. */
export const SENDER_CLIENT_LIMITS = { maxConcurrentPerOrigin: SEND_BATCH_SIZE, maxConcurrent: SEND_BATCH_SIZE * ALL_ROUNDS + 1 };

/**
 * How long a round's transaction may stay idle while its attempts run: an attempt may wait
 * behind the other rounds' attempts to the same origin (the sender's and dispatch's, each at
 * most SEND_BATCH_SIZE), each bounded by the time-out.
 */
export function roundLimitMs(timeoutMs: number): number {
  return timeoutMs * ALL_ROUNDS + ROUND_MARGIN_MS;
}

export function senderState(): SenderState {
  return { passes: passState(), wakeUpsAdded: new Set(), dispatchPasses: passState(), fanOut: 1 };
}

/**
 * What opens a round's transaction (this sender's, dispatch's): BEGIN with the limit on how
 * long it may stay idle while its attempts run, and any settings of its own.
 */
export function roundBegin(deps: Pick<SenderDeps, 'timeoutMs'>, settings: readonly string[] = []): string {
  return ['begin', `set local idle_in_transaction_session_timeout = ${Math.ceil(roundLimitMs(deps.timeoutMs))}`, ...settings].join('; ');
}

/**
 * Records a round on its transaction and ends it: committed, or rolled back when the record
 * fails. The lane awaits the result later; a failure is not unhandled meanwhile.
 */
export function recordAndEnd(round: OpenTransaction, record: () => Promise<void>): Promise<void> {
  const recorded = record().then(
    () => round.end(),
    (error: unknown) => round.end(error),
  );
  recorded.catch(() => undefined);
  return recorded;
}

/** Sends every due delivery in a pass of rounds, or joins the pass running in this process (sending-pass.ts). */
export function sendDueDeliveries(deps: SenderDeps): Promise<number> {
  return runOrJoinPass(deps.state.passes, (claimed) => sendRound(deps, claimed), { batchSize: SEND_BATCH_SIZE, maxLanes: CONCURRENT_ROUNDS });
}

/**
 * Claims and sends one round on a transaction of its own; returns how many it claimed and
 * the recording of their outcomes (that transaction's end). The claim walks the due index
 * in order and reaches each row by key: when the statistics lag a growing backlog, the
 * planner would otherwise read and sort every due delivery, and scan the table to lock 64 of
 * them.
 */
async function sendRound(deps: SenderDeps, claimed: (count: number) => void): Promise<{ count: number; recorded: Promise<void> }> {
  const round = await openPoolTransaction(deps.pool, {
    first: (connection) => wakeAfterRound(deps, connection),
    begin: roundBegin(deps, ['set local enable_seqscan = off', 'set local enable_bitmapscan = off']),
    // With the BEGIN, in one round trip.
    with: [claimDueDeliveries(SEND_BATCH_SIZE)],
  });
  let deliveries: ClaimedDelivery[];
  let outcomes: DeliveryOutcome[];
  try {
    deliveries = round.opened[0]!.rows as ClaimedDelivery[];
    claimed(deliveries.length);
    if (deliveries.length === 0) {
      await round.end();
      return { count: 0, recorded: Promise.resolve() };
    }
    outcomes = await sendAll(deps, deliveries);
  } catch (error) {
    // end() rethrows it, after the rollback.
    await round.end(error);
    throw error;
  }
  const recorded = recordAndEnd(round, () => recordDeliveryOutcomes(round.client, deps, outcomes));
  deps.log.debug({ deliveries: deliveries.length }, 'webhook round sent');
  return { count: deliveries.length, recorded };
}

/**
 * Makes sure a wake-up is committed for the moment a round starting now is over at the
 * latest, in case this process dies mid-round: its deliveries are due again then, and nothing
 * else may wake a sender before the minute's sweep. Only when some delivery is due: a round
 * with nothing to claim needs none, and would otherwise leave the wake-up that runs the next
 * empty round. One per second bucket: once this process has committed the wake-up of a
 * second, rounds starting later do not queue on its row.
 */
async function wakeAfterRound(deps: SenderDeps, connection: pg.PoolClient): Promise<void> {
  const { wakeUpsAdded } = deps.state;
  const momentMs = Date.now() + roundLimitMs(deps.timeoutMs) + 1000;
  const bucket = wakeUpBucket(momentMs);
  if (wakeUpsAdded.has(bucket)) return;
  if (!(await wakeSenderAtIfDue(connection, momentMs))) return;
  wakeUpsAdded.add(bucket);
  const past = Math.floor(Date.now() / 1000);
  for (const added of wakeUpsAdded) if (added < past) wakeUpsAdded.delete(added);
}

/** One attempt per delivery, concurrently; the outcomes in completion order (health counts consecutive failures in that order). */
export async function sendAll(deps: SenderDeps, deliveries: ClaimedDelivery[]): Promise<DeliveryOutcome[]> {
  const secretsBySubscription = new Map<string, SigningKeys | null>();
  const outcomes: DeliveryOutcome[] = [];
  await Promise.all(
    deliveries.map(async (delivery) => {
      if (!delivery.enabled || delivery.urlDisabled) {
        outcomes.push({ delivery, dropped: delivery.enabled ? 'url auto-disabled' : 'subscription switched off' });
        return;
      }
      const attemptedAtMs = Date.now();
      const result = await attempt(deps, delivery, secretsBySubscription, attemptedAtMs);
      outcomes.push({ delivery, attemptedAtMs, result });
    }),
  );
  return outcomes;
}

async function attempt(
  deps: SenderDeps,
  delivery: ClaimedDelivery,
  secretsBySubscription: Map<string, SigningKeys | null>,
  attemptedAtMs: number,
): Promise<OutboundResult> {
  let secret = secretsBySubscription.get(delivery.subscriptionId);
  if (secret === undefined) {
    try {
      secret = delivery.signingSecretSealed === null ? null : signingKeys(deps.secrets.unseal(delivery.signingSecretSealed));
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
