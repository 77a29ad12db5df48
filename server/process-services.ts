// What a running process shares between requests, jobs and commands: one object
// built at start and handed to the HTTP host, the worker and the admin CLI. It depends on
// no implementation, only on the interfaces of what it holds (declared beside the modules
// that own them), so every module may depend on it.
import type { MikroORM } from '@mikro-orm/postgresql';
import type pg from 'pg';
import type { Logger } from 'pino';
import type { CredentialCache } from './auth/credential-cache.ts';
import type { Config } from './config.ts';
import type { MessagingProvider } from './messaging/provider.ts';
import type { ConversationEventFeed } from './realtime/conversation-event.ts';
import type { Secrets } from './secrets.ts';

export type Services = {
  config: Config;
  /** The connection string in use (embedded or DATABASE_URL). */
  databaseUrl: string;
  orm: MikroORM;
  /** The ORM's own pg pool: hot-path SQL and Graphile Worker share it. */
  pool: pg.Pool;
  secrets: Secrets;
  log: Logger;
  /** The messaging provider's client: one per process, so its connections are pooled. */
  messaging: MessagingProvider;
  /** Chat-widget conversation events any process published; listening only while the HTTP host runs. */
  conversationEvents: ConversationEventFeed;
  /** Credential and feature changes any process announced, for live subscriptions (heard on the same LISTEN connection). */
  credentialChanges: CredentialChangeFeed;
  /** Credentials this process resolved, by their HMAC; in use only while credential changes are heard. */
  credentialCache: CredentialCache;
  /** Chat-widget changes any process announced, for the visitor sockets this process holds (heard on the same LISTEN connection). */
  widgetChanges: WidgetChangeFeed;
};

// Credential changes heard by this process (implemented by auth/credential-changes.ts).
/** Called with the changed account's id; with null when changes may have been missed (the LISTEN connection was lost). */
export type CredentialChangeListener = (accountId: string | null) => void;

/** This process's listeners, fed by the LISTEN connection of server/realtime/conversation-event-feed.ts. */
export type CredentialChangeFeed = {
  /** Calls `listener` when one of `accountIds` changes (or anything may have). Returns an unwatch function. */
  watch(accountIds: readonly string[], listener: CredentialChangeListener): () => void;
  /** What the LISTEN connection hears on the channel. */
  receive(payload: string | undefined): void;
  /** The LISTEN connection came back: what was announced meanwhile is lost, so everyone checks. */
  reconnected(): void;
};

// Chat-widget changes heard by this process (implemented by widgets/widget-changes.ts).
/** Called with the changed widget's id; with null when changes may have been missed (the LISTEN connection was lost). */
export type WidgetChangeListener = (widgetId: string | null) => void;

/** This process's listeners, fed by the LISTEN connection of server/realtime/conversation-event-feed.ts. */
export type WidgetChangeFeed = {
  /** Calls `listener` for every widget change any process announced. Returns an unsubscribe function. */
  subscribe(listener: WidgetChangeListener): () => void;
  /** What the LISTEN connection hears on the channel. */
  receive(payload: string | undefined): void;
  /** The LISTEN connection came back: what was announced meanwhile is lost, so everyone checks. */
  reconnected(): void;
};
