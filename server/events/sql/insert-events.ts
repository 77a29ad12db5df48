// The one writer of outbox events: every event the service announces is inserted by this
// statement, inside the transaction of the change it announces (so it exists exactly when
// the change committed), with the payload's `user` block (the account where the event
// happened) read from the account row in the same statement. Webhook delivery reads them;
// the trigger on `events` queues the dispatch of those still to dispatch (Migration20261129110000;
// its function as Migration20261129120000 left it).
import { newId } from '../../db/ids.ts';
import { sql, type Sql } from '../../db/sql.ts';
import { currentRequestId } from '../../request-context.ts';
import type { EventName } from '../event-names.ts';

/** The payload's `user` block: the account where the event happened. */
export type UserBlock = { id: string; email: string; name: string | null };

/** An event to write: its id (the delivery id for webhooks), name, payload without `user`, and the request that caused it. */
export type EventRow = { id: string; name: EventName; payload: Record<string, unknown>; requestId: string | null };

/** A new event's id and payload (without its `user` block, which the insert adds). */
export function newEventRow(name: EventName, data: Record<string, unknown>): EventRow {
  const id = newId('evt');
  // The request being served, if any: its deliveries carry the id as X-Request-Id.
  return { id, name, payload: { event: name, event_id: id, occurred_at: new Date().toISOString(), data }, requestId: currentRequestId() ?? null };
}

/** An event and the account where it happened. */
export type AccountEvent = EventRow & { accountId: string };

/** The events of one account. */
export function eventsOf(accountId: string, events: readonly EventRow[]): AccountEvent[] {
  return events.map((event) => ({ ...event, accountId }));
}

/**
 * The insert of the events: a data-modifying statement to run alone or compose into the
 * change's own statement. With `onlyIf` (a boolean SQL condition, such as
 * `exists (select 1 from contact)` over a sibling CTE) it inserts nothing when that is false.
 * An event of an account that does not exist is not inserted.
 */
export function insertEventsSql(events: readonly AccountEvent[], options: { onlyIf?: Sql } = {}): Sql {
  const rows = JSON.stringify(
    events.map((event) => ({ id: event.id, account_id: event.accountId, name: event.name, payload: event.payload, request_id: event.requestId })),
  );
  // The accounts are named apart so they are read by primary key: joined only on the
  // recordset's column (estimated at 100 rows), the planner hashes a scan of every account.
  const accountIds = [...new Set(events.map((event) => event.accountId))];
  const condition = options.onlyIf ? sql`\n     and (${options.onlyIf})` : sql``;
  // An event no subscription can receive (none enabled on the account, nor on its agency for
  // its clients) is written dispatched: the dispatch has nothing to send for it, and would only
  // claim it to mark it so, an update of every index of the row. (The account's own
  // subscriptions are also named by value, as every statement on an account's rows does.)
  return sql`insert into events (id, account_id, name, payload, request_id, dispatched_at)
  select e.id, a.id, e.name,
         e.payload || jsonb_build_object('user', jsonb_build_object('id', a.id, 'email', a.email, 'name', a.name)),
         e.request_id,
         case when exists (select from webhook_subscriptions s where s.account_id = a.id and s.account_id = any(${accountIds}::text[]) and s.enabled)
                or exists (select from webhook_subscriptions s where s.account_id = a.agency_id and s.apply_to_sub_accounts and s.enabled)
              then null else now() end
    from accounts a
    join jsonb_to_recordset(${rows}::jsonb) as e(id text, account_id text, name text, payload jsonb, request_id text) on e.account_id = a.id
   where a.id = any(${accountIds}::text[])${condition}`;
}
