// What a running process shares between requests, jobs and commands: one object
// built at start and handed to the HTTP host, the worker and the admin CLI.
import type { MikroORM } from '@mikro-orm/postgresql';
import type pg from 'pg';
import type { Logger } from 'pino';
import type { Config } from './config.ts';
import type { MessagingProvider } from './messaging/provider-client.ts';
import type { CredentialChangeFeed } from './auth/credential-changes.ts';
import type { ConversationEventFeed } from './realtime/conversation-events.ts';
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
};
