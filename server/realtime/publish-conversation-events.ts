// Publishing chat-widget conversation events: pg_notify, so PostgreSQL delivers each event to
// every listening process (conversation-event-feed.ts) when, and only if, its change commits.
// The one writer of notifications on any channel, and the one module that knows the
// conversation channel's payloads.
import type { EntityManager } from '@mikro-orm/postgresql';
import type pg from 'pg';
import { joinSql, runSql, sql, stringLiteral, type Sql } from '../db/sql.ts';
import type { ConversationEvent, ConversationEventFeed, ConversationTarget } from './conversation-event.ts';

export const CONVERSATION_EVENTS_CHANNEL = 'chat_widget_conversation_events';
// PostgreSQL refuses NOTIFY payloads of 8000 bytes or more; stay clearly below.
const MAX_PAYLOAD_BYTES = 7900;

/** A message too large to notify whole: the listener loads it by sid. */
export type MessageReference = ConversationTarget & { kind: 'message-ref'; messageSid: string };
export type Notification = ConversationEvent | MessageReference;

/**
 * Announces the event with pg_notify on the caller's transaction: every API process hears it
 * when (and only if) the change commits. Works from any process (the worker publishes the
 * bot's replies).
 */
export async function publishConversationEvent(em: EntityManager, event: ConversationEvent): Promise<void> {
  await publishConversationEvents(em, [event]);
}

/**
 * Several events in one statement, announced in this order, and only while their widgets
 * exist: a deleted widget's conversations are pushed nowhere (a reply to its visitor is
 * stored, not announced). A deletion that commits after this statement but before the
 * caller's commit is announced first, and its sockets' check holds the events back
 * (server/http/widget-socket-review.ts).
 */
export async function publishConversationEvents(em: EntityManager, events: ConversationEvent[]): Promise<void> {
  if (events.length === 0) return;
  const widgets = new Map(events.map((event) => [event.widgetId, event.accountId]));
  const exist = joinSql(
    [...widgets].map(([widgetId, accountId]) => sql`exists (select 1 from chat_widgets where id = ${widgetId} and account_id = ${accountId})`),
    ' and ',
  );
  await runSql(em, sql`select ${notifyConversationSql(events)} where ${exist}`);
}

/**
 * The one writer of notifications on any channel (conversation events here, credential
 * changes in server/auth/credential-changes.ts, widget changes in
 * server/widgets/widget-changes.ts): a select-list call of pg_notify, delivered
 * to every listening process when, and only if, the transaction commits.
 */
export function notifySql(channel: string, payload: string): Sql {
  return sql`pg_notify(${channel}::text, ${payload}::text)`;
}

/**
 * The one writer of conversation notifications: select-list SQL calling pg_notify for each
 * event in order, to run as `select ...` or compose into the statement that writes the
 * change (the announcement then commits with it).
 */
export function notifyConversationSql(events: ConversationEvent[]): Sql {
  return joinSql(events.flatMap(notificationPayloads).map((payload) => notifySql(CONVERSATION_EVENTS_CHANNEL, payload)));
}

/**
 * The one after-commit announcement, for a change whose transaction notifies nothing:
 * PostgreSQL serializes the commits of all transactions that notified (one lock, held until
 * each one's commit is flushed), so this runs once the change has committed, in a
 * transaction of its own with synchronous_commit off (nothing durable rides on it), holding
 * that lock only for an instant. Plain SQL text with the payloads as literals, so that a pool
 * transaction sends it with its COMMIT in one round trip (openPoolTransaction's end); an ORM
 * transaction, which cannot, hands its events to announceAfterCommit. Null when there is
 * nothing to announce.
 */
export function announceAfterCommitText(events: ConversationEvent[]): string | null {
  const calls = events.flatMap(notificationPayloads).map((payload) => `pg_notify('${CONVERSATION_EVENTS_CHANNEL}', ${stringLiteral(payload)})`);
  return calls.length === 0 ? null : `select set_config('synchronous_commit', 'off', true), ${calls.join(', ')}`;
}

/**
 * ConversationEventFeed.announce for this process: the after-commit announcement of
 * committed changes, run on the pool. Calls made while one is in flight go out together
 * next, in one statement, in the order they were made.
 */
export function announceAfterCommit(pool: pg.Pool): ConversationEventFeed['announce'] {
  let queued: { events: ConversationEvent[]; sent: () => void; failed: (error: unknown) => void }[] = [];
  let announcing = false;
  const announceQueued = async () => {
    announcing = true;
    while (queued.length > 0) {
      const batch = queued;
      queued = [];
      try {
        const text = announceAfterCommitText(batch.flatMap((entry) => entry.events));
        if (text) await pool.query(text);
        for (const entry of batch) entry.sent();
      } catch (error) {
        for (const entry of batch) entry.failed(error);
      }
    }
    announcing = false;
  };
  return (events) => {
    if (events.length === 0) return Promise.resolve();
    return new Promise<void>((sent, failed) => {
      queued.push({ events, sent, failed });
      if (!announcing) void announceQueued();
    });
  };
}

/**
 * One payload per notification: a message too large goes as a reference, and a read event
 * naming more messages than fit (a visitor who reads a long conversation at last) as
 * several read events, each naming some of them, in order.
 */
function notificationPayloads(event: ConversationEvent): string[] {
  if (event.kind === 'read') return readPayloads(event);
  let payload = JSON.stringify(event);
  if (Buffer.byteLength(payload) > MAX_PAYLOAD_BYTES) {
    if (event.kind !== 'message') throw new Error(`conversation event too large to announce (${event.kind})`);
    const reference: MessageReference = {
      kind: 'message-ref',
      accountId: event.accountId,
      widgetId: event.widgetId,
      visitorId: event.visitorId,
      contactId: event.contactId,
      messageSid: event.message.messageSid,
    };
    payload = JSON.stringify(reference);
  }
  return [payload];
}

function readPayloads(event: ConversationEvent & { kind: 'read' }): string[] {
  const payloads: string[] = [];
  let sids: string[] = [];
  // Bytes of the event without sids, then each sid adds its JSON string and a comma.
  const emptySize = Buffer.byteLength(JSON.stringify({ ...event, messageSids: [] }));
  let size = emptySize;
  for (const sid of event.messageSids) {
    const sidSize = Buffer.byteLength(JSON.stringify(sid)) + 1;
    if (sids.length > 0 && size + sidSize > MAX_PAYLOAD_BYTES) {
      payloads.push(JSON.stringify({ ...event, messageSids: sids }));
      sids = [];
      size = emptySize;
    }
    sids.push(sid);
    size += sidSize;
  }
  payloads.push(JSON.stringify({ ...event, messageSids: sids }));
  return payloads;
}
