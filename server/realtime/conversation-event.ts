// What a chat-widget conversation event is, and the feed a process hears them on (one per
// process, on Services as `conversationEvents`). Types only: Services depends on no
// implementation.
import type { ConversationMessage } from '../widgets/conversation-message.ts';

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
   * Announces events of a change that has committed, for an ORM transaction that notified
   * nothing (announceAfterCommit in publish-conversation-events.ts). Resolves once sent; a
   * process that dies before that loses the push (the widget reloads the conversation when it
   * reconnects). Events of one call stay in order, and calls go out in the order they were made.
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
