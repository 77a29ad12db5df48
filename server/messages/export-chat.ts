// GET /contacts/{contactId}/chat-export: the conversation as readable text, one line per
// message: `[<ISO time>] <Inbound|Outbound> (<sender>): <body>`. It shows the newest
// messages, within EXPORT_MESSAGES_LIMIT messages and EXPORT_TEXT_LIMIT characters, under a
// first line saying how many earlier ones are left out; messageCount counts them all.
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Message } from '../db/entities/index.ts';
import { contactDisplayName } from '../contacts/contact-name.ts';
import { PLACEHOLDER_EMAIL } from '../contacts/contact-record.ts';
import { requireContact } from '../contacts/find-contact.ts';
import { publicDirection, senderOf } from './message-record.ts';
import { newestContactMessagesAndCount } from './newest-messages.ts';

/** Most messages the export reads: the newest ones. */
export const EXPORT_MESSAGES_LIMIT = 1_000;

/** Most characters of the export's text: the oldest of the lines read give way first. */
export const EXPORT_TEXT_LIMIT = 1_000_000;

export type ChatExport = {
  contactId: string;
  contactName: string;
  phoneNumber: string;
  email: string;
  messageCount: number;
  chatExport: string;
};

/**
 * A body on one line: each run of white space that holds a line break becomes one space.
 * Matching whole runs (`\s+`) and looking inside each keeps it linear; a pattern that
 * backtracks over a run without a line break (`\s*[\r\n]+\s*`) is quadratic in its length.
 */
export function bodyOnOneLine(body: string): string {
  return body.replace(/\s+/g, (run) => (run.includes('\n') || run.includes('\r') ? ' ' : run)).trim();
}

type ChatLineFields = Pick<Message, 'createdAt' | 'direction' | 'sender' | 'body'>;

/** One message as one line, so each message stays on its line. */
export function formatChatLine(message: ChatLineFields): string {
  const direction = publicDirection(message.direction) === 'inbound' ? 'Inbound' : 'Outbound';
  return `[${message.createdAt.toISOString()}] ${direction} (${senderOf(message)}): ${bodyOnOneLine(message.body)}`;
}

export function formatChat(messages: ChatLineFields[]): string {
  return messages.map(formatChatLine).join('\n');
}

/** The export's first line when it leaves messages out. */
export function omittedMessagesLine(count: number): string {
  return `… ${count.toLocaleString('en-US')} earlier ${count === 1 ? 'message' : 'messages'} not included`;
}

/**
 * The lines of the newest of `messages` (oldest first) that fit in EXPORT_TEXT_LIMIT
 * characters with the line saying how many of the contact's `total` are left out. The
 * newest message always shows, cut to fit when it alone is too long.
 */
export function formatChatExport(messages: ChatLineFields[], total: number): string {
  const lines = messages.map(formatChatLine);
  const headerSize = (kept: number) => (total > kept ? omittedMessagesLine(total - kept).length + 1 : 0);
  let first = lines.length;
  let size = 0;
  while (first > 0) {
    const grown = size + lines[first - 1]!.length + (first < lines.length ? 1 : 0);
    if (grown + headerSize(lines.length - first + 1) > EXPORT_TEXT_LIMIT) break;
    size = grown;
    first -= 1;
  }
  const kept = first === lines.length && first > 0 ? [lines[first - 1]!.slice(0, EXPORT_TEXT_LIMIT - headerSize(1))] : lines.slice(first);
  return [...(total > kept.length ? [omittedMessagesLine(total - kept.length)] : []), ...kept].join('\n');
}

export async function exportChat(em: EntityManager, accountId: string, contactId: string): Promise<ChatExport> {
  const contact = await requireContact(em, accountId, contactId);
  const { messages, total } = await newestContactMessagesAndCount(em, accountId, contact.id, EXPORT_MESSAGES_LIMIT);
  return {
    contactId: contact.id,
    contactName: contactDisplayName(contact),
    phoneNumber: contact.phoneNumber ?? '',
    email: contact.email ?? PLACEHOLDER_EMAIL,
    messageCount: total,
    chatExport: formatChatExport(messages, total),
  };
}
