// Sending: claims due deliveries in rounds, makes one HTTP attempt for each through the
// outbound client (concurrently), and records the outcomes. One pass at a time per process
// runs the rounds, several side by side (lanes, sending-pass.ts) while full rounds say more
// is due, so the connections stay busy while a round is claimed or recorded; the lanes are
// bounded (the leases are sized for it). A wake-up arriving while a pass runs joins it and
// its job ends at once, leaving its Graphile Worker slot to dispatch. The outcomes of rounds that
// finish together are recorded in one transaction, one at a time per process, so concurrent
// rounds do not queue on each other's health rows and commits.
// At send time the subscription is checked again: switched off, or its URL auto-disabled
// for the account, drops the delivery (Delivery rules 1 and 4).
import type pg from 'pg';
import type { Logger } from 'pino';
import type { OutboundClient, OutboundResult } from '../outbound/http-client.ts';
import type { Secrets } from '../secrets.ts';
import { deliveryHeaders } from './signature.ts';
import { recordDeliveryOutcomes, type DeliveryOutcome } from './record-delivery-outcomes.ts';
import { claimDueDeliveries, type ClaimedDelivery } from './sql/claim-due-deliveries.ts';
import { wakeSenderAt, wakeUpBucket } from './sql/wake-sender.ts';
import { withPoolTransaction } from '../db/pool-transaction.ts';
import { passState, runOrJoinPass, type PassState } from './sending-pass.ts';

/** Deliveries claimed per round; equal to the per-origin concurrency, so none of a round waits for another of it. */
export const SEND_BATCH_SIZE = 64;
/** Rounds (lanes of the pass) that may run at once in one process. */
const CONCURRENT_ROUNDS = 4;
const LEASE_MARGIN_MS = 5_000;

/** What the process's sender shares across runs of the task (senderState()). */
export type SenderState = {
  /** The pass running in this process, if any (sending-pass.ts). */
  passes: PassState;
  /** Records outcomes, a transaction at a time. */
  recorder: OutcomeRecorder;
  /** Second buckets whose lease-expiry wake-up a committed claim of this process has added. */
  wakeUpsAdded: Set<number>;
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

/** Options for the process's one outbound client, matched to the batch size and the lease. */
export const SENDER_CLIENT_LIMITS = { maxConcurrentPerOrigin: SEND_BATCH_SIZE, maxConcurrent: SEND_BATCH_SIZE * CONCURRENT_ROUNDS + 1 };

/**
 * How long a claimed delivery stays leased: its own attempt may wait behind the other rounds'
 * attempts to the same origin, each bounded by the time-out.
 */
export function leaseMs(timeoutMs: number): number {
  return timeoutMs * CONCURRENT_ROUNDS + LEASE_MARGIN_MS;
}

export function senderState(deps: { pool: pg.Pool; retrySchedule: readonly number[]; disableAfter: number }): SenderState {
  return { passes: passState(), recorder: outcomeRecorder(deps), wakeUpsAdded: new Set() };
}

/** Sends every due delivery in a pass of rounds, or joins the pass running in this process (sending-pass.ts). */
export function sendDueDeliveries(deps: SenderDeps): Promise<number> {
  return runOrJoinPass(deps.state.passes, (claimed) => sendRound(deps, claimed), { batchSize: SEND_BATCH_SIZE, maxLanes: CONCURRENT_ROUNDS });
}

type OutcomeRecorder = { record(outcomes: DeliveryOutcome[]): Promise<void> };

/**
 * One recording transaction at a time: outcomes handed in while one runs go together into
 * the next. Each caller's promise settles when the transaction holding its outcomes does.
 */
function outcomeRecorder(deps: { pool: pg.Pool; retrySchedule: readonly number[]; disableAfter: number }): OutcomeRecorder {
  let waiting: { outcomes: DeliveryOutcome[]; done: Promise<void>; start: () => void } | null = null;
  let running: Promise<void> = Promise.resolve();
  return {
    record(outcomes) {
      if (!waiting) {
        let start!: () => void;
        const started = new Promise<void>((resolve) => (start = resolve));
        const batch: DeliveryOutcome[] = [];
        const done = started.then(() => recordDeliveryOutcomes(deps, batch));
        waiting = { outcomes: batch, done, start };
        const next = waiting;
        // The next batch starts once the running one has settled, and takes what came meanwhile.
        void running.finally(() => {
          if (waiting === next) waiting = null;
          next.start();
        });
        running = done.catch(() => undefined);
      }
      waiting.outcomes.push(...outcomes);
      return waiting.done;
    },
  };
}

/** Claims and sends one round; returns how many it claimed and the recording of their outcomes. */
async function sendRound(deps: SenderDeps, claimed: (count: number) => void): Promise<{ count: number; recorded: Promise<void> }> {
  const deliveries = await claim(deps);
  claimed(deliveries.length);
  if (deliveries.length === 0) return { count: 0, recorded: Promise.resolve() };

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
  const recorded = deps.state.recorder.record(outcomes);
  // Awaited by the lane later; a failure is not unhandled meanwhile.
  recorded.catch(() => undefined);
  deps.log.debug({ deliveries: deliveries.length }, 'webhook round sent');
  return { count: deliveries.length, recorded };
}

/**
 * Claims a round and, in the same transaction, a wake-up at lease expiry in case this process
 * dies mid-round. The claim's commit does not wait for the disk: if the database loses it in a
 * crash, it loses the lease with it, and the deliveries are simply due again. The claim walks
 * the due index in order and reaches each row by key: when the statistics lag a growing
 * backlog, the planner would otherwise read and sort every due delivery, and scan the table
 * to lease 64 of them.
 */
async function claim(deps: SenderDeps): Promise<ClaimedDelivery[]> {
  const { wakeUpsAdded } = deps.state;
  const { deliveries, added } = await withPoolTransaction(deps.pool, async (connection) => {
    await connection.query('set local synchronous_commit = off; set local enable_seqscan = off; set local enable_bitmapscan = off');
    const claimed = await claimDueDeliveries(connection, SEND_BATCH_SIZE, leaseMs(deps.timeoutMs));
    if (claimed.leaseUntilMs === null) return { deliveries: claimed.deliveries, added: null };
    // A committed claim of this process already added the wake-up of this second (a later
    // commit never outlives an earlier one in a crash), so rounds do not queue on its row.
    const bucket = wakeUpBucket(claimed.leaseUntilMs);
    if (wakeUpsAdded.has(bucket)) return { deliveries: claimed.deliveries, added: null };
    await wakeSenderAt(connection, [claimed.leaseUntilMs]);
    return { deliveries: claimed.deliveries, added: bucket };
  });
  if (added !== null) {
    wakeUpsAdded.add(added);
    const past = Math.floor(Date.now() / 1000);
    for (const bucket of wakeUpsAdded) if (bucket < past) wakeUpsAdded.delete(bucket);
  }
  return deliveries;
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
