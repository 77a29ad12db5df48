// How a stored message is shown: as a contact Message (content, timestamp,
// sender, channel), as a ChatMessage inside a session, and in event payloads.
import { z } from 'zod';
import type { Message } from '../db/entities/index.ts';

/** The spec knows two directions; API sends are outbound too. */
export const PublicDirection = z.enum(['inbound', 'outbound']);
export type PublicDirection = z.infer<typeof PublicDirection>;

export function publicDirection(direction: Message['direction']): PublicDirection {
  return direction === 'inbound' ? 'inbound' : 'outbound';
}

/** The recorded sender, or who a message of that direction comes from. */
export function senderOf(message: Pick<Message, 'direction' | 'sender'>): string {
  return message.sender ?? (message.direction === 'inbound' ? 'contact' : 'agent');
}

export const ContactMessage = z.object({
  content: z.string(),
  timestamp: z.string(),
  sender: z.string(),
  channel: z.string(),
});
export type ContactMessage = z.infer<typeof ContactMessage>;

export function toContactMessage(message: Pick<Message, 'body' | 'createdAt' | 'direction' | 'sender' | 'channel'>): ContactMessage {
  return {
    content: message.body,
    timestamp: message.createdAt.toISOString(),
    sender: senderOf(message),
    channel: message.channel,
  };
}

export const ChatMessageRecord = z.object({
  id: z.string(),
  body: z.string(),
  direction: PublicDirection,
  timestamp: z.string().nullable(),
  type: z.string(),
  channel: z.string(),
  status: z.string(),
});
export type ChatMessageRecord = z.infer<typeof ChatMessageRecord>;

/** The fields of a stored message that its records and event blocks show. */
export type ShownMessage = Pick<
  Message,
  'id' | 'body' | 'direction' | 'createdAt' | 'type' | 'channel' | 'status' | 'sender' | 'senderName' | 'mediaUrl' | 'mediaContentType' | 'externalId'
>;

export function toChatMessage(message: Pick<ShownMessage, 'id' | 'body' | 'direction' | 'createdAt' | 'type' | 'channel' | 'status'>): ChatMessageRecord {
  return {
    id: message.id,
    body: message.body,
    direction: publicDirection(message.direction),
    timestamp: message.createdAt.toISOString(),
    type: message.type,
    channel: message.channel,
    status: message.status,
  };
}

/**
 * A chat session's message (GET .../chat-sessions?includeMessages=true): the spec's
 * ChatMessage, plus who wrote it and its media, so a console reading a conversation again
 * shows what it showed live.
 */
export const SessionMessageRecord = ChatMessageRecord.extend({
  sender: z.string().describe('`contact`, `bot`, or for a reply the credential that wrote it (as in GET /contacts/messages/{contactId}).'),
  sender_name: z.string().nullable().describe("The name a reply showed the visitor (its `sender_name`); null for the contact's own messages and the bot's."),
  media_url: z.string().nullable(),
  media_content_type: z.string().nullable(),
});
export type SessionMessageRecord = z.infer<typeof SessionMessageRecord>;

export function toSessionMessage(
  message: Pick<ShownMessage, 'id' | 'body' | 'direction' | 'createdAt' | 'type' | 'channel' | 'status' | 'sender' | 'senderName' | 'mediaUrl' | 'mediaContentType'>,
): SessionMessageRecord {
  return {
    ...toChatMessage(message),
    sender: senderOf(message),
    sender_name: message.senderName ?? null,
    media_url: message.mediaUrl ?? null,
    media_content_type: message.mediaContentType ?? null,
  };
}

/** The `message` block of New Message and Replies events. */
export function toMessageEventData(message: ShownMessage, sessionId: string) {
  return {
    ...toChatMessage(message),
    session_id: sessionId,
    sender: senderOf(message),
    media_url: message.mediaUrl ?? null,
    media_content_type: message.mediaContentType ?? null,
    external_id: message.externalId ?? null,
  };
}
