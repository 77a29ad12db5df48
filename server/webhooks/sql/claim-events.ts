// Claims a batch of undispatched events and finds, in the same statement, the
// subscriptions each one goes to, with what a first attempt sends. Runs inside the dispatch
// round's transaction: the claimed events stay locked (other dispatchers skip them) until
// they are marked dispatched, and the subscriptions routed to are held (`for key share`)
// while the round's attempts run.
import { prepared, sql, type Statement } from '../../db/sql.ts';

/** An event, and one subscription it goes to (null when none does), with what its first attempt sends. */
export type EventRoute = {
  eventId: string;
  subscriptionId: string | null;
  accountId: string;
  eventName: string;
  /** The event payload as JSON text: the request body. */
  body: string;
  requestId: string | null;
  url: string | null;
  retriesEnabled: boolean | null;
  signingSecretSealed: string | null;
};

// Candidates per event: the account's own subscriptions (precedence 0), then its agency's
// subscriptions that apply to sub-accounts (precedence 1), minus those whose URL the client
// also subscribes to itself (Agency inheritance 3: the client's own one is used). Of the
// rest, one subscription per URL (the same event is never delivered twice to one endpoint).
// Checks: enabled, subscribed to the event name, URL not auto-disabled for the account where
// the event happened (Delivery rule 1), and the conversation-summary tag filter of the
// account's own subscriptions (`subscribed_to_tags` is not inherited).
// Every claimed event comes back at least once (subscription null when none matches), so
// the caller can mark the whole batch dispatched.
const claimEvents = (limit: number) => sql`
with claimed as (
  select e.id, e.account_id, e.name, e.payload, e.request_id
  from events e
  where e.dispatched_at is null
  order by e.created_at
  limit ${limit}
  for update skip locked
),
candidates as (
  select c.id as event_id, c.account_id, s.id as subscription_id, s.url, s.retries_enabled, s.signing_secret_sealed, 0 as precedence
  from claimed c
  join webhook_subscriptions s on s.account_id = c.account_id
  where s.enabled
    and c.name = any (s.subscribed_to)
    and (
      c.name <> 'Chat Concluded'
      or c.payload -> 'data' ->> 'kind' is distinct from 'conversation_summary'
      or cardinality(s.subscribed_to_tags) = 0
      or s.subscribed_to_tags && array(
        select jsonb_array_elements_text(
          case when jsonb_typeof(c.payload -> 'data' -> 'tags') = 'array' then c.payload -> 'data' -> 'tags' else '[]'::jsonb end
        )
      )
    )
  union all
  select c.id, c.account_id, s.id, s.url, s.retries_enabled, s.signing_secret_sealed, 1
  from claimed c
  join accounts a on a.id = c.account_id
  join webhook_subscriptions s on s.account_id = a.agency_id and s.apply_to_sub_accounts
  where s.enabled
    and c.name = any (s.subscribed_to)
    and not exists (
      select 1 from webhook_subscriptions own
      where own.account_id = c.account_id and own.url = s.url
    )
),
routes as (
  select distinct on (k.event_id, k.url) k.event_id, k.subscription_id, k.account_id, k.url, k.retries_enabled, k.signing_secret_sealed
  from candidates k
  where not exists (
    select 1 from webhook_health h
    where h.subscription_id = k.subscription_id and h.account_id = k.account_id and h.is_disabled
  )
  order by k.event_id, k.url, k.precedence, k.subscription_id
),
-- The subscriptions routed to, held until the round commits: deleting one waits for the
-- round, whose deliveries reference it; one deleted while this claim waited is not routed to.
held as (
  select s.id from webhook_subscriptions s
  where s.id in (select subscription_id from routes)
  order by s.id
  for key share
)
select
  c.id as "eventId",
  r.subscription_id as "subscriptionId",
  c.account_id as "accountId",
  c.name as "eventName",
  c.payload::text as body,
  c.request_id as "requestId",
  r.url,
  r.retries_enabled as "retriesEnabled",
  r.signing_secret_sealed as "signingSecretSealed"
from claimed c
left join routes r on r.event_id = c.id and r.subscription_id in (select id from held)
order by c.id
`;

/** The claim, to send with the round's BEGIN in one round trip (its rows are EventRoute's). */
export function claimEventRoutes(limit: number): Statement {
  return prepared('claim-event-routes', claimEvents(limit));
}
