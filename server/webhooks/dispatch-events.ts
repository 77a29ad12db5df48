// Dispatch: turns committed events into queued deliveries. Each round claims a batch
// of undispatched events, queues one delivery per (event, matching subscription) in one
// statement, marks the batch dispatched in the same transaction (so an event counts as
// dispatched only once its deliveries are durably queued) and wakes the sender.
import type pg from 'pg';
import { newId } from '../db/ids.ts';
import { claimEventRoutes } from './sql/claim-events.ts';
import { queueDeliveries, type QueuedDelivery } from './sql/queue-deliveries.ts';
import { wakeSenderNow } from './sql/wake-sender.ts';
import { withPoolTransaction } from '../db/pool-transaction.ts';

export const DISPATCH_BATCH_SIZE = 500;

type Counts = { events: number; deliveries: number };

// One pass at a time per process. A dispatch job started while a pass runs (every commit
// during a run queues one) joins instead: it waits for one more full pass after the current
// one, which sees every event committed before the join, and reports nothing of its own,
// so its task ends at once. Without this, under steady traffic every worker slot ends up
// running a dispatch loop of its own and the sender's jobs wait behind them.
let current: Promise<Counts> | null = null;
let following: Promise<Counts> | null = null;

/**
 * Dispatches every undispatched event, a batch per transaction; returns the counts. When a
 * pass is already running in this process, waits for the pass after it and returns zeros.
 */
export function dispatchEvents(pool: pg.Pool, batchSize = DISPATCH_BATCH_SIZE): Promise<Counts> {
  if (current === null) {
    const pass = dispatchAll(pool, batchSize).finally(() => {
      if (current === pass) current = null;
    });
    current = pass;
    return pass;
  }
  following ??= current
    .catch(() => undefined)
    .then(() => {
      following = null;
      return dispatchEvents(pool, batchSize);
    });
  return following.then(() => ({ events: 0, deliveries: 0 }));
}

async function dispatchAll(pool: pg.Pool, batchSize: number): Promise<Counts> {
  const total = { events: 0, deliveries: 0 };
  for (;;) {
    const round = await dispatchBatch(pool, batchSize);
    total.events += round.events;
    total.deliveries += round.deliveries;
    if (round.events < batchSize) return total;
  }
}

async function dispatchBatch(pool: pg.Pool, batchSize: number): Promise<{ events: number; deliveries: number }> {
  return withPoolTransaction(pool, async (client) => {
    const routes = await claimEventRoutes(client, batchSize);
    const eventIds = [...new Set(routes.map((route) => route.eventId))];
    const deliveries: QueuedDelivery[] = [];
    for (const route of routes) {
      if (route.subscriptionId === null) continue;
      deliveries.push({ id: newId('dlv'), eventId: route.eventId, subscriptionId: route.subscriptionId, accountId: route.accountId });
    }
    let queued = 0;
    if (eventIds.length > 0) {
      ({ queued } = await queueDeliveries(client, deliveries, eventIds));
      if (queued > 0) await wakeSenderNow(client);
    }
    return { events: eventIds.length, deliveries: queued };
  });
}
