// What a chat-widget conversation event is, and the feed a process hears them on (one per
// process, on Services as `conversationEvents`). Types only: Services depends on no
// implementation.

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
