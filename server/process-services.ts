// What a running process shares between requests, jobs and commands: one object
// built at start and handed to the HTTP host, the worker and the admin CLI. The
// interfaces of what it holds are declared here, so that this module depends on no
// implementation and every module may depend on it.
import type { MikroORM } from '@mikro-orm/postgresql';
import type pg from 'pg';
import type { Logger } from 'pino';
import type { Config } from './config.ts';
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
  /** Chat-widget changes any process announced, for the visitor sockets this process holds (heard on the same LISTEN connection). */
  widgetChanges: WidgetChangeFeed;
};

// The messaging provider (implemented by messaging/provider-client.ts).
export type ProviderCredentials = { phoneNumberId: string; businessAccountId: string | null; accessToken: string };
export type ProviderTemplateSend = { to: string; templateName: string; language: string; parameters: string[] };
/** A free-form message inside the 24-hour window: text, or media by URL with the text as its caption. */
export type ProviderSessionSend = { to: string; text: string; media: { url: string; contentType: string } | null };
export type ProviderSendResult =
  | { ok: true; providerMessageId: string }
  | { ok: false; status: number | null; retryable: boolean; message: string };
export type ProviderTemplate = {
  id: string;
  name: string;
  language: string;
  category: string;
  status: string;
  components: unknown[];
  raw: Record<string, unknown>;
};
/** Why the provider would not confirm a connection's credentials. */
export type ConnectionProblem =
  | 'token_refused'
  | 'phone_number_unreachable'
  | 'business_account_unreachable'
  | 'phone_number_not_in_business_account'
  | 'provider_unavailable';
export type ConnectionCheck = { ok: true } | { ok: false; problem: ConnectionProblem; message: string };
export type MessagingProvider = {
  /**
   * Whether the token reaches the phone number and, when a business account is given, that
   * account, which must hold the number. Connections are routed by the number, so only a
   * token its owner holds may claim it.
   */
  checkConnection(credentials: ProviderCredentials): Promise<ConnectionCheck>;
  sendTemplate(credentials: ProviderCredentials, send: ProviderTemplateSend): Promise<ProviderSendResult>;
  /** A free-form message; the provider accepts it only while the contact's 24-hour window is open. */
  sendSessionMessage(credentials: ProviderCredentials, send: ProviderSessionSend): Promise<ProviderSendResult>;
  /** Every template of the business account, following the provider's paging. */
  listTemplates(credentials: ProviderCredentials): Promise<ProviderTemplate[]>;
  close(): Promise<void>;
};

// Credential changes heard by this process (implemented by auth/credential-changes.ts).
/** Called with the changed account's id; with null when changes may have been missed (the LISTEN connection was lost). */
export type CredentialChangeListener = (accountId: string | null) => void;

/** This process's listeners, fed by the LISTEN connection of server/realtime/conversation-events.ts. */
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

/** This process's listeners, fed by the LISTEN connection of server/realtime/conversation-events.ts. */
export type WidgetChangeFeed = {
  /** Calls `listener` for every widget change any process announced. Returns an unsubscribe function. */
  subscribe(listener: WidgetChangeListener): () => void;
  /** What the LISTEN connection hears on the channel. */
  receive(payload: string | undefined): void;
  /** The LISTEN connection came back: what was announced meanwhile is lost, so everyone checks. */
  reconnected(): void;
};

// Chat-widget conversation events any process published (implemented by realtime/conversation-events.ts).
/** A chat-widget conversation message as the spec returns it. */
export type ConversationMessage = {
  messageSid: string;
  body: string;
  mediaUrl: string | null;
  mediaContentType: string | null;
  timestamp: string;
  type: string;
  direction: 'inbound' | 'outbound' | 'outbound-api';
  status: string;
  /** The name a reply shows the visitor; null for the visitor's own messages and the bot's. */
  sender_name: string | null;
};
/** Whose conversation an event is about. */
export type ConversationTarget = { accountId: string; widgetId: string; visitorId: string; contactId: string };
export type ConversationEvent =
  | (ConversationTarget & { kind: 'message'; message: ConversationMessage })
  | (ConversationTarget & { kind: 'typing'; isBotTyping: boolean })
  // The visitor is typing (renewed every few seconds while they do) or stopped: for the account only.
  | (ConversationTarget & { kind: 'visitor-typing'; isVisitorTyping: boolean })
  | (ConversationTarget & { kind: 'read'; messageSids: string[] })
  // The conversation needs a person (POST /contacts/{id}/handoff, the widget's "talk to a person"): for the account only.
  | (ConversationTarget & { kind: 'handoff'; reason: string | null });

export type ConversationEventListener = (event: ConversationEvent) => void;

/** This process's end of the channel: one per API process, on Services as `conversationEvents`. */
export type ConversationEventFeed = {
  /**
   * Announces events of a change that has committed, from this process, for a transaction
   * that would otherwise notify nothing: PostgreSQL serializes the commits of all
   * transactions that notified (one lock, held until each one's commit is flushed), so a
   * change announced in its own transaction takes its turn in that line. Announced here,
   * the change commits without it, and the announcement goes out in one statement with
   * whatever else this process announces meanwhile, with synchronous_commit off (nothing
   * durable rides on it), holding the lock only for an instant. Resolves once sent; a
   * process that dies between the commit and this loses the push (the widget reloads the
   * conversation when it reconnects). Events of one call stay in order, and calls go out in
   * the order they were made.
   */
  announce(events: ConversationEvent[]): Promise<void>;
  /** Called for every event any process published (after commit). Returns an unsubscribe function. */
  subscribe(listener: ConversationEventListener): () => void;
  /** Opens the LISTEN connection (the HTTP host does, for ROLE=api and all). */
  start(): Promise<void>;
  stop(): Promise<void>;
  /** Whether the LISTEN connection is up now. */
  listening(): boolean;
};
