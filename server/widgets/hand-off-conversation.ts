// A conversation handed to a person (contacts/hand-off.ts: the bot pauses, Human Alerted once
// per chat session), with the chat-widget visitor's side: the bot posts the widget's
// `handoffMessage` (or the words the API call gave) so the visitor learns a person is coming. Every way in goes through here:
// POST /contacts/{id}/handoff, the widget's "talk to a person" action, and a keyword in a
// visitor message (the bot's turn).
import type { EntityManager } from '@mikro-orm/postgresql';
import { handOff, type HandOff, type HandOffNotice, type HandOffOutcome } from '../contacts/hand-off.ts';
import { recordMessage } from '../messages/record-message.ts';
import { publishConversationEvent } from '../realtime/publish-conversation-events.ts';
import { conversationMessageOf } from './conversation-message.ts';
import { WIDGET_CHANNEL } from './find-or-create-visitor.ts';
import { readSettings } from './widget-settings.ts';

export const DEFAULT_HANDOFF_MESSAGE = 'Thanks — a person will answer here shortly.';

/** Posted by the bot although it is now paused: the visitor learns a person is coming. */
const noteHandOffToVisitor: HandOffNotice = async (tx, accountId, visitor, message) => {
  const note = await recordMessage(tx, accountId, {
    contactId: visitor.contactId,
    direction: 'outbound',
    body: message ?? readSettings(visitor.widgetSettings).handoffMessage ?? DEFAULT_HANDOFF_MESSAGE,
    channel: WIDGET_CHANNEL,
    sender: 'bot',
  });
  await publishConversationEvent(tx, {
    kind: 'message',
    accountId,
    widgetId: visitor.widgetId,
    visitorId: visitor.visitorId,
    contactId: visitor.contactId,
    message: conversationMessageOf(note.message),
  });
  return note.sessionId;
};

/** Hands the contact's conversation to a person, on the caller's transaction. */
export function handOffConversation(tx: EntityManager, accountId: string, contactId: string, handoff: HandOff): Promise<HandOffOutcome> {
  return handOff(tx, accountId, contactId, handoff, noteHandOffToVisitor);
}
