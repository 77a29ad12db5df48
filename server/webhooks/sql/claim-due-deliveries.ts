// Claims due deliveries for one sending round: pending, due, and not leased by another
// worker (or leased by one that died: its lease has expired). The lease covers one attempt
// (time-out plus margin); a worker killed mid-attempt leaves the delivery due again after
// it, with the same id. The lease sets `locked_until` and nothing else: no index holds that
// column, so on a page with room (the table's fillfactor) the claim is a HOT update, writing
// no index entry. A leased delivery stays at the head of the due index while its attempt
// runs, and the next claim steps over it (at most the rounds in flight). Recording the
// attempt sets `next_attempt_at` (from the first attempt, Delivery rule 2) and clears the lease.
// Returns what the attempt needs: the event payload, the subscription as it is now
// (send-time checks) and its health for the delivery's account.
import type pg from 'pg';
import { prepared, queryRows, sql } from '../../db/sql.ts';

export type ClaimedDelivery = {
  id: string;
  subscriptionId: string;
  accountId: string;
  /** 1-based number of the attempt about to be made. */
  attempt: number;
  eventName: string;
  /** The event payload as JSON text: the request body. */
  body: string;
  url: string;
  enabled: boolean;
  retriesEnabled: boolean;
  signingSecretSealed: string | null;
  /** The URL is auto-disabled for the account where the event happened. */
  urlDisabled: boolean;
  /** The HTTP request that caused the event, if one did. */
  requestId: string | null;
};

const claimDue = (limit: number, leaseMs: number) => sql`
with due as (
  select d.id
  from webhook_deliveries d
  where d.status = 'pending'
    and d.next_attempt_at <= now()
    and (d.locked_until is null or d.locked_until < now())
  order by d.next_attempt_at
  limit ${limit}
  for update skip locked
),
leased as (
  update webhook_deliveries d
  set locked_until = now() + ${leaseMs}::float8 * interval '1 millisecond'
  from due
  where d.id = due.id
  returning d.id, d.event_id, d.subscription_id, d.account_id, d.attempts, d.locked_until
)
select
  l.id,
  l.subscription_id as "subscriptionId",
  l.account_id as "accountId",
  l.attempts + 1 as attempt,
  e.name as "eventName",
  e.payload::text as body,
  s.url,
  s.enabled,
  s.retries_enabled as "retriesEnabled",
  s.signing_secret_sealed as "signingSecretSealed",
  coalesce(h.is_disabled, false) as "urlDisabled",
  e.request_id as "requestId",
  (extract(epoch from l.locked_until) * 1000)::float8 as "leaseUntilMs"
from leased l
join events e on e.id = l.event_id
join webhook_subscriptions s on s.id = l.subscription_id
left join webhook_health h on h.subscription_id = l.subscription_id and h.account_id = l.account_id
`;

export async function claimDueDeliveries(
  client: pg.PoolClient,
  limit: number,
  leaseMs: number,
): Promise<{ deliveries: ClaimedDelivery[]; leaseUntilMs: number | null }> {
  const rows = await queryRows<ClaimedDelivery & { leaseUntilMs: number }>(client, prepared('claim-due-deliveries', claimDue(limit, leaseMs)));
  const leaseUntilMs = rows.length ? rows[0]!.leaseUntilMs : null;
  return { deliveries: rows, leaseUntilMs };
}
