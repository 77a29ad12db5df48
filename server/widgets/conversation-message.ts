// A stored message as the widget conversation shows it (spec: Chat-widget conversation
// message). `messageSid` is the widget's own id of a visitor's message (its `messageSid` or
// `id`, stored as the external id), so a widget recognises what it sent; every other
// message's is our id (`msg_…`). Read events name outbound messages, so by our id too.
import { z } from 'zod';
import type { Message } from '../db/entities/index.ts';

export const ConversationMessage = z.object({
  messageSid: z.string().describe('Our id of the message (`msg_…`).'),
  body: z.string(),
  mediaUrl: z.string().nullable(),
  mediaContentType: z.string().nullable(),
  timestamp: z.string().describe('ISO 8601 date-time.'),
  type: z.string().describe('`text` or `image`.'),
  direction: z.enum(['inbound', 'outbound', 'outbound-api']).describe('`inbound` is from the visitor.'),
  status: z.string().describe('Delivery status: received, sent, delivered, read, failed.'),
  sender_name: z.string().nullable().describe("The name a person's reply shows (its `sender_name`); null for the visitor's own messages and the bot's."),
});
export type ConversationMessage = z.infer<typeof ConversationMessage>;

/** The columns a conversation message is made of, as SQL selects them (timestamp already ISO 8601). */
export const CONVERSATION_MESSAGE_COLUMNS = `id, external_id, body, media_url, media_content_type, type, direction, status, sender_name,
  to_char(created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as timestamp`;

export type ConversationMessageRow = {
  id: string;
  external_id: string | null;
  body: string;
  media_url: string | null;
  media_content_type: string | null;
  type: string;
  direction: ConversationMessage['direction'];
  status: string;
  sender_name: string | null;
  timestamp: string;
};

export function toConversationMessage(row: ConversationMessageRow): ConversationMessage {
  return {
    messageSid: row.direction === 'inbound' && row.external_id !== null ? row.external_id : row.id,
    body: row.body,
    mediaUrl: row.media_url,
    mediaContentType: row.media_content_type,
    timestamp: row.timestamp,
    // The widget shows two kinds; anything else the API stored (a template send) reads as text.
    type: row.type === 'image' ? 'image' : 'text',
    direction: row.direction,
    status: row.status,
    sender_name: row.sender_name,
  };
}

/** A message just stored (its entity), without reading it back. */
export function conversationMessageOf(
  message: Pick<Message, 'id' | 'externalId' | 'body' | 'mediaUrl' | 'mediaContentType' | 'type' | 'direction' | 'status' | 'senderName' | 'createdAt'>,
): ConversationMessage {
  return toConversationMessage({
    id: message.id,
    external_id: message.externalId ?? null,
    body: message.body,
    media_url: message.mediaUrl ?? null,
    media_content_type: message.mediaContentType ?? null,
    type: message.type,
    direction: message.direction,
    status: message.status,
    sender_name: message.senderName ?? null,
    timestamp: message.createdAt.toISOString(),
  });
}

