// POST /webhooks/{webhookId}/replay: this subscription's failed deliveries created since
// `since` go back on the queue, due now, with their original delivery ids (the sender
// keeps X-Webhook-Delivery stable). Dropped ones stay dropped: nothing suppressed by the
// on/off switch is replayed later.
import type { EntityManager } from '@mikro-orm/postgresql';
import type pg from 'pg';
import { z } from 'zod';
import { findSubscription, positionOf } from './find-subscription.ts';
import { wakeSenderNow } from './sql/wake-sender.ts';
import { withPoolTransaction } from '../db/pool-transaction.ts';
import { queryRows, runSql, sql } from '../db/sql.ts';

export const WebhookReplayInput = z.object({
  since: z.union([z.iso.datetime({ offset: true }), z.iso.date()], {
    error: (issue) => (issue.input === undefined ? 'since is required' : 'since must be an ISO 8601 date or date-time, such as 2026-01-31T09:00:00Z'),
  }),
});
export type WebhookReplayInput = z.infer<typeof WebhookReplayInput>;

const requeue = (subscriptionId: string, since: Date) => sql`
update webhook_deliveries
set status = 'pending', next_attempt_at = now(), locked_until = null, updated_at = now()
where subscription_id = ${subscriptionId} and status = 'failed' and created_at >= ${since.toISOString()}::timestamptz`;

export async function replayDeliveries(
  em: EntityManager,
  pool: pg.Pool,
  accountId: string,
  webhookId: string,
  input: WebhookReplayInput,
): Promise<{ webhook_id: string; replayed: number }> {
  const subscription = await findSubscription(em, accountId, webhookId);
  const replayed = await withPoolTransaction(pool, async (client) => {
    const requeued = (await runSql(client, requeue(subscription.id, new Date(input.since)))).rowCount;
    // An API-only process may run before any worker created its schema; the sender's own sweep finds them then.
    const rows = await queryRows<{ ready: boolean }>(client, sql`select to_regnamespace('graphile_worker') is not null as ready`);
    if (requeued > 0 && rows[0]?.ready) await wakeSenderNow(client);
    return requeued;
  });
  return { webhook_id: await positionOf(em, subscription), replayed };
}
