// A stored message as the widget conversation shows it (spec: Chat-widget conversation
// message). `messageSid` is our message id (`msg_…`), whatever id the widget sent with it.
import type { EntityManager } from '@mikro-orm/postgresql';
import type { ConversationMessage } from '../realtime/conversation-events.ts';

/** The columns a conversation message is made of, as SQL selects them (timestamp already ISO 8601). */
export const CONVERSATION_MESSAGE_COLUMNS = `id, body, media_url, media_content_type, type, direction, status,
  to_char(created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as timestamp`;

export type ConversationMessageRow = {
  id: string;
  body: string;
  media_url: string | null;
  media_content_type: string | null;
  type: string;
  direction: ConversationMessage['direction'];
  status: string;
  timestamp: string;
};

export function toConversationMessage(row: ConversationMessageRow): ConversationMessage {
  return {
    messageSid: row.id,
    body: row.body,
    mediaUrl: row.media_url,
    mediaContentType: row.media_content_type,
    timestamp: row.timestamp,
    // The widget shows two kinds; anything else the API stored (a template send) reads as text.
    type: row.type === 'image' ? 'image' : 'text',
    direction: row.direction,
    status: row.status,
  };
}

/** One message, read on `em` (inside the transaction that stored it, to announce it). */
export async function loadConversationMessage(em: EntityManager, messageId: string): Promise<ConversationMessage> {
  const [row] = await em.execute<ConversationMessageRow[]>(`select ${CONVERSATION_MESSAGE_COLUMNS} from messages where id = ?`, [messageId]);
  if (!row) throw new Error(`message ${messageId} not found`);
  return toConversationMessage(row);
}
