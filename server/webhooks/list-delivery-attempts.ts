// GET /webhooks/{webhookId}/deliveries: the delivery log, one entry per HTTP attempt,
// newest first, paged with the signed cursors of pagination.ts (keyed by attempt id).
import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { queryRows, sql } from '../db/sql.ts';
import { keysetPage, type PageInput } from '../pagination.ts';
import type { Secrets } from '../secrets.ts';
import { findSubscription } from './find-subscription.ts';

export const DeliveryAttemptRecord = z.object({
  delivery_id: z.string(),
  event: z.string(),
  attempt: z.number().int(),
  status_code: z.number().int().nullable(),
  duration_ms: z.number().int(),
  error: z.string().nullable(),
  created_at: z.string(),
});
export type DeliveryAttemptRecord = z.infer<typeof DeliveryAttemptRecord>;

type AttemptRow = Omit<DeliveryAttemptRecord, 'created_at'> & { id: string; created_at: Date };

// Ordered and compared in SQL: created_at has microseconds there, a JS Date only milliseconds.
// The subscription's own attempts are read newest first along its index, so a page costs the
// same whatever other subscriptions send. The cursor's attempt is found within the subscription.
// Exported for the plan's test.
export const deliveryLogPageSql = (subscriptionId: string, after: string | null, limit: number) => sql`
select a.id, a.delivery_id, e.name as event, a.attempt, a.status_code, a.duration_ms, a.error, a.created_at
from webhook_attempts a
join events e on e.id = a.event_id and e.account_id = a.account_id
where a.subscription_id = ${subscriptionId}${
  after === null
    ? sql``
    : sql`
  and (a.created_at, a.id) < (select c.created_at, c.id from webhook_attempts c where c.id = ${after} and c.subscription_id = ${subscriptionId})`
}
order by a.created_at desc, a.id desc
limit ${limit}`;

export async function listDeliveryAttempts(
  em: EntityManager,
  secrets: Secrets,
  accountId: string,
  webhookId: string,
  input: PageInput,
): Promise<{ deliveries: DeliveryAttemptRecord[]; next_cursor: string | null }> {
  const subscription = await findSubscription(em, accountId, webhookId);
  // The row id, not the positional id: a cursor must not move to another subscription when positions shift.
  const scope = `webhook-deliveries:${subscription.id}`;
  const { items, next_cursor } = await keysetPage(secrets, scope, input, (after, take) => queryRows<AttemptRow>(em, deliveryLogPageSql(subscription.id, after, take)));
  return {
    deliveries: items.map(({ id: _id, created_at, ...attempt }) => ({ ...attempt, created_at: new Date(created_at).toISOString() })),
    next_cursor,
  };
}
