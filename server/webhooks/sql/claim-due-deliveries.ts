// Claims due deliveries for one sending round: pending, due, and not locked by another round.
// The claim is a row lock held by the round's transaction (send-deliveries.ts), not a written
// lease. `locked_until`, the lease earlier versions wrote, is still honoured so that a
// deployment may run both while it rolls over. Returns what the attempt needs: the payload,
// the subscription as it is now (send-time checks) and its health for the account.
import { prepared, rawSql, sql, type Statement } from '../../db/sql.ts';

export type ClaimedDelivery = {
  id: string;
  eventId: string;
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

/**
 * A delivery a round may claim (alias `d`): pending, its attempt time come, and not leased by
 * a sender of an earlier version. Also what the wake-up a round adds checks for (wake-sender.ts).
 */
export const DUE_DELIVERY = rawSql(`d.status = 'pending'
    and d.next_attempt_at <= now()
    and (d.locked_until is null or d.locked_until < now())`);

const claimDue = (limit: number) => sql`
with due as (
  select d.id, d.event_id, d.subscription_id, d.account_id, d.attempts
  from webhook_deliveries d
  where ${DUE_DELIVERY}
  order by d.next_attempt_at
  limit ${limit}
  for update skip locked
)
select
  l.id,
  l.event_id as "eventId",
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
  e.request_id as "requestId"
from due l
join events e on e.id = l.event_id
join webhook_subscriptions s on s.id = l.subscription_id
left join webhook_health h on h.subscription_id = l.subscription_id and h.account_id = l.account_id
`;

/**
 * The claim of up to `limit` due deliveries, to send with the round's BEGIN in one round trip:
 * it locks them on that transaction and returns them (ClaimedDelivery rows). A locked
 * delivery stays at the head of the due index while its attempt runs, and the next claim
 * steps over it (at most the rounds in flight).
 */
export function claimDueDeliveries(limit: number): Statement {
  return prepared('claim-due-deliveries', claimDue(limit));
}
