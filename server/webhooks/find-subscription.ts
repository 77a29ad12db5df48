// `{webhookId}` in the /webhooks paths: the subscription's positional id or its name.
import { LockMode, type EntityManager } from '@mikro-orm/postgresql';
import { WebhookSubscription } from '../db/entities/index.ts';
import { queryRows, sql } from '../db/sql.ts';
import { NotFoundError } from '../errors.ts';

// The spec's ids are positions: 1-based, by created_at then row id, within the account.
const POSITION_ORDER = { createdAt: 'asc', id: 'asc' } as const;

/**
 * The account's own subscription that `webhookId` names, or 404. A purely numeric
 * string is the position when such a position exists, else a name. Only the account's
 * own rows are looked at, so an agency's inherited subscription is never addressable
 * from a client account (Agency inheritance rule 4) and another account's is not found.
 * `lock` holds the row for the caller's transaction.
 */
export async function findSubscription(em: EntityManager, accountId: string, webhookId: string, lock = false): Promise<WebhookSubscription> {
  const locking = lock ? { lockMode: LockMode.PESSIMISTIC_WRITE as const } : {};
  if (/^[0-9]+$/.test(webhookId)) {
    const position = Number(webhookId);
    if (Number.isSafeInteger(position) && position >= 1) {
      const [atPosition] = await em.find(
        WebhookSubscription,
        { account: accountId },
        { orderBy: POSITION_ORDER, offset: position - 1, limit: 1, ...locking },
      );
      if (atPosition) return atPosition;
    }
  }
  const byName = await em.findOne(WebhookSubscription, { account: accountId, name: webhookId }, locking);
  if (!byName) throw new NotFoundError('Webhook not found');
  return byName;
}

/** The subscription's public `id`: its current position in the account's list. */
export async function positionOf(em: EntityManager, subscription: WebhookSubscription): Promise<string> {
  // Compared in SQL: created_at has microseconds there, a JS Date only milliseconds.
  const [row] = await queryRows<{ position: string }>(
    em,
    sql`select count(*) + 1 as position
       from webhook_subscriptions other, webhook_subscriptions self
      where self.id = ${subscription.id} and other.account_id = self.account_id
        and (other.created_at, other.id) < (self.created_at, self.id)`,
  );
  return String(row.position);
}

/** The account's subscriptions in position order (index + 1 is the public id). */
export async function subscriptionsInPositionOrder(em: EntityManager, accountId: string): Promise<WebhookSubscription[]> {
  return em.find(WebhookSubscription, { account: accountId }, { orderBy: POSITION_ORDER });
}
