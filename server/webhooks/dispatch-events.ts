// Dispatch: turns committed events into queued deliveries. Each round claims a batch
// of undispatched events, queues one delivery per (event, matching subscription) in one
// statement, marks the batch dispatched in the same transaction (so an event counts as
// dispatched only once its deliveries are durably queued) and wakes the sender.
import type pg from 'pg';
import { newId } from '../db/ids.ts';
import { claimEventRoutes } from './sql/claim-events.ts';
import { queueDeliveries, type QueuedDelivery } from './sql/queue-deliveries.ts';
import { wakeSenderNow } from './sql/wake-sender.ts';

export const DISPATCH_BATCH_SIZE = 500;

/** Dispatches every undispatched event, a batch per transaction; returns the counts. */
export async function dispatchEvents(pool: pg.Pool, batchSize = DISPATCH_BATCH_SIZE): Promise<{ events: number; deliveries: number }> {
  const total = { events: 0, deliveries: 0 };
  for (;;) {
    const round = await dispatchBatch(pool, batchSize);
    total.events += round.events;
    total.deliveries += round.deliveries;
    if (round.events < batchSize) return total;
  }
}

async function dispatchBatch(pool: pg.Pool, batchSize: number): Promise<{ events: number; deliveries: number }> {
  const client = await pool.connect();
  let failed: Error | undefined;
  try {
    await client.query('begin');
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
    await client.query('commit');
    return { events: eventIds.length, deliveries: queued };
  } catch (error) {
    failed = error as Error;
    await client.query('rollback').catch(() => {});
    throw error;
  } finally {
    client.release(failed);
  }
}
