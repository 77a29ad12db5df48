// What a process hears: one LISTEN connection per API process, handing the conversation
// events any process published (publish-conversation-events.ts) to its in-process
// subscribers (the Socket.IO gateway, tRPC subscriptions), so nothing a visitor needs lives
// in one process's memory. The same connection hears the channels other modules name
// (credential changes, widget changes): a process keeps one LISTEN connection whatever it hears.
import pg from 'pg';
import type { Logger } from 'pino';
import { prepared, queryRows, rawSql, sql } from '../db/sql.ts';
import { CONVERSATION_MESSAGE_COLUMNS, toConversationMessage, type ConversationMessageRow } from '../widgets/conversation-message.ts';
import type { ConversationEvent, ConversationEventFeed, ConversationEventListener } from './conversation-event.ts';
import { announceAfterCommit, CONVERSATION_EVENTS_CHANNEL, type MessageReference, type Notification } from './publish-conversation-events.ts';

export const LISTENER_APPLICATION_NAME = 'conversation-events-listener';

/** Another channel the same LISTEN connection hears, for the module that owns it. */
export type AlsoHeard = {
  channel: string;
  receive(payload: string | undefined): void;
  /** The connection came back after a loss: whatever was announced meanwhile was missed. */
  reconnected(): void;
  /** Whether the channel is heard now: true once LISTEN is in place (at start and after a loss), false when lost or stopped. */
  listening?(hearing: boolean): void;
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
  const hearing = (on: boolean) => {
    for (const other of alsoHear) other.listening?.(on);
  };

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
      hearing(false);
      next.removeAllListeners('notification');
      next.end().catch(() => {});
      if (stopped) return;
      log.warn({ err: error }, 'conversation event connection lost; reconnecting');
      scheduleReconnect();
    };
    next.on('error', lost);
    next.on('end', () => lost());
    next.on('notification', (message) => {
      if (message.channel === CONVERSATION_EVENTS_CHANNEL) receive(message.payload);
      else alsoHear.find((other) => other.channel === message.channel)?.receive(message.payload);
    });
    client = next;
    try {
      await next.connect();
      await next.query([CONVERSATION_EVENTS_CHANNEL, ...alsoHear.map((other) => other.channel)].map((channel) => `LISTEN ${channel}`).join('; '));
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
    // Lost again already: `lost` has said so, and a reconnection is on its way.
    if (client === next) hearing(true);
    if (failures > 0) {
      log.info('conversation event connection restored');
      for (const other of alsoHear) other.reconnected();
    }
    failures = 0;
  };

  return {
    announce: announceAfterCommit(options.pool),
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
      hearing(false);
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
  const [row] = await queryRows<ConversationMessageRow>(
    pool,
    prepared(
      'load-announced-message',
      sql`select ${rawSql(CONVERSATION_MESSAGE_COLUMNS)}
       from messages
      where account_id = ${reference.accountId} and contact_id = ${reference.contactId}
        and (id = ${reference.messageSid} or (direction = 'inbound' and external_id = ${reference.messageSid}))
      limit 1`,
    ),
  );
  if (!row) return null;
  const { accountId, widgetId, visitorId, contactId } = reference;
  return { kind: 'message', accountId, widgetId, visitorId, contactId, message: toConversationMessage(row) };
}
