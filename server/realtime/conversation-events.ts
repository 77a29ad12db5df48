// Live chat-widget conversation events across processes. A change announces itself with
// pg_notify on its own transaction, so PostgreSQL delivers it to every listening API process
// when, and only if, the change commits (or, for a transaction that would notify for nothing
// else, right after its commit: ConversationEventFeed.announce); each API process keeps one LISTEN connection and
// hands what it hears to its in-process subscribers (the Socket.IO gateway, tRPC
// subscriptions). Nothing a visitor needs lives in one process's memory. This is the one
// module that knows the channel; its connection also hears the channels other modules
// name (credential changes, widget changes), so a process keeps one LISTEN connection
// whatever it hears.
import type { EntityManager } from '@mikro-orm/postgresql';
import pg from 'pg';
import type { Logger } from 'pino';
import { joinSql, prepared, queryRows, runSql, sql, type Sql } from '../db/sql.ts';
import type { ConversationEvent, ConversationEventFeed, ConversationEventListener, ConversationMessage, ConversationTarget } from './conversation-event.ts';

export type { ConversationEvent, ConversationEventFeed, ConversationEventListener, ConversationMessage } from './conversation-event.ts';

const CHANNEL = 'chat_widget_conversation_events';
export const LISTENER_APPLICATION_NAME = 'conversation-events-listener';
// PostgreSQL refuses NOTIFY payloads of 8000 bytes or more; stay clearly below.
const MAX_PAYLOAD_BYTES = 7900;

/** A message too large to notify whole: the listener loads it by sid. */
type MessageReference = ConversationTarget & { kind: 'message-ref'; messageSid: string };
type Notification = ConversationEvent | MessageReference;

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
  return joinSql(events.flatMap(notificationPayloads).map((payload) => notifySql(CHANNEL, payload)));
}

/**
 * The same announcement as plain SQL text with its payloads as literals, for a statement sent
 * with a COMMIT in one round trip (openPoolTransaction's end): it runs right after the commit,
 * in a transaction of its own that does not wait for its WAL flush, so the committing
 * transaction notified nothing and did not wait in line for PostgreSQL's notify lock. Null
 * when there is nothing to announce.
 */
export function announceAfterCommitText(events: ConversationEvent[]): string | null {
  const calls = events.flatMap(notificationPayloads).map((payload) => `pg_notify('${CHANNEL}', ${pg.escapeLiteral(payload)})`);
  return calls.length === 0 ? null : `select set_config('synchronous_commit', 'off', true), ${calls.join(', ')}`;
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

/** Another channel the same LISTEN connection hears, for the module that owns it. */
export type AlsoHeard = {
  channel: string;
  receive(payload: string | undefined): void;
  /** The connection came back after a loss: whatever was announced meanwhile was missed. */
  reconnected(): void;
};

export function createConversationEventFeed(options: {
  databaseUrl: string;
  pool: pg.Pool;
  log: Logger;
  alsoHear?: AlsoHeard[];
}): ConversationEventFeed {
  const alsoHear = options.alsoHear ?? [];
  const log = options.log.child({ component: 'conversation-events' });
  const listeners = new Set<ConversationEventListener>();
  let client: pg.Client | null = null;
  let stopped = true;
  let retryTimer: NodeJS.Timeout | null = null;
  let failures = 0;

  const deliver = (event: ConversationEvent) => {
    for (const listener of listeners) {
      try {
        listener(event);
      } catch (error) {
        log.error({ err: error }, 'conversation event listener failed');
      }
    }
  };

  const receive = (payload: string | undefined) => {
    let notification: Notification;
    try {
      notification = JSON.parse(payload ?? '') as Notification;
    } catch {
      log.warn('unreadable conversation event ignored');
      return;
    }
    if (notification.kind !== 'message-ref') {
      deliver(notification);
      return;
    }
    loadReferencedMessage(options.pool, notification).then(
      (event) => {
        if (event) deliver(event);
        else log.warn({ messageSid: notification.messageSid }, 'announced message not found');
      },
      (error) => log.error({ err: error }, 'loading an announced message failed'),
    );
  };

  const scheduleReconnect = () => {
    if (stopped || retryTimer) return;
    // Back off from 0.25 s to 30 s while the database is away.
    const delay = Math.min(30_000, 250 * 2 ** Math.min(failures, 7));
    failures += 1;
    retryTimer = setTimeout(() => {
      retryTimer = null;
      connect().catch(() => {});
    }, delay);
    retryTimer.unref();
  };

  const connect = async () => {
    // Named, so an operator (and a test) can tell this session apart in pg_stat_activity.
    const next = new pg.Client({ connectionString: options.databaseUrl, application_name: LISTENER_APPLICATION_NAME });
    const lost = (error?: Error) => {
      if (client !== next) return;
      client = null;
      next.removeAllListeners('notification');
      next.end().catch(() => {});
      if (stopped) return;
      log.warn({ err: error }, 'conversation event connection lost; reconnecting');
      scheduleReconnect();
    };
    next.on('error', lost);
    next.on('end', () => lost());
    next.on('notification', (message) => {
      if (message.channel === CHANNEL) receive(message.payload);
      else alsoHear.find((other) => other.channel === message.channel)?.receive(message.payload);
    });
    client = next;
    try {
      await next.connect();
      await next.query([CHANNEL, ...alsoHear.map((other) => other.channel)].map((channel) => `LISTEN ${channel}`).join('; '));
    } catch (error) {
      if (client === next) {
        client = null;
        next.end().catch(() => {});
        if (!stopped) {
          log.warn({ err: error }, 'conversation event connection failed; retrying');
          scheduleReconnect();
        }
      }
      throw error;
    }
    if (stopped) {
      client = null;
      await next.end().catch(() => {});
      return;
    }
    if (failures > 0) {
      log.info('conversation event connection restored');
      for (const other of alsoHear) other.reconnected();
    }
    failures = 0;
  };

  // Announcements waiting for the statement in flight to finish: they go out together next.
  let queued: { events: ConversationEvent[]; sent: () => void; failed: (error: unknown) => void }[] = [];
  let announcing = false;
  const announceQueued = async () => {
    announcing = true;
    while (queued.length > 0) {
      const batch = queued;
      queued = [];
      try {
        await runSql(
          options.pool,
          sql`select set_config('synchronous_commit', 'off', true), ${notifyConversationSql(batch.flatMap((entry) => entry.events))}`,
        );
        for (const entry of batch) entry.sent();
      } catch (error) {
        for (const entry of batch) entry.failed(error);
      }
    }
    announcing = false;
  };

  return {
    announce(events) {
      if (events.length === 0) return Promise.resolve();
      return new Promise<void>((sent, failed) => {
        queued.push({ events, sent, failed });
        if (!announcing) void announceQueued();
      });
    },
    subscribe(listener) {
      listeners.add(listener);
      return () => {
        listeners.delete(listener);
      };
    },
    async start() {
      if (!stopped) return;
      stopped = false;
      // The first connection must work: a process that cannot listen does not start.
      await connect();
    },
    async stop() {
      stopped = true;
      if (retryTimer) clearTimeout(retryTimer);
      retryTimer = null;
      const current = client;
      client = null;
      if (current) await current.end().catch(() => {});
    },
    listening() {
      return client !== null && !stopped;
    },
  };
}

async function loadReferencedMessage(pool: pg.Pool, reference: MessageReference): Promise<ConversationEvent | null> {
  // The sid is our id, or the widget's own id of a visitor's message (conversation-message.ts).
  const [row] = await queryRows<{
    body: string;
    media_url: string | null;
    media_content_type: string | null;
    timestamp: string;
    type: string;
    direction: ConversationMessage['direction'];
    status: string;
    sender_name: string | null;
  }>(
    pool,
    prepared(
      'load-announced-message',
      sql`select body, media_url, media_content_type, type, direction, status, sender_name,
            to_char(created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as timestamp
       from messages
      where account_id = ${reference.accountId} and contact_id = ${reference.contactId}
        and (id = ${reference.messageSid} or (direction = 'inbound' and external_id = ${reference.messageSid}))
      limit 1`,
    ),
  );
  if (!row) return null;
  return {
    kind: 'message',
    accountId: reference.accountId,
    widgetId: reference.widgetId,
    visitorId: reference.visitorId,
    contactId: reference.contactId,
    message: {
      messageSid: reference.messageSid,
      body: row.body,
      mediaUrl: row.media_url,
      mediaContentType: row.media_content_type,
      timestamp: row.timestamp,
      type: row.type,
      direction: row.direction,
      status: row.status,
      sender_name: row.sender_name,
    },
  };
}
