// GET /contacts/{contactId}/chat-export: the whole conversation as readable
// text, one line per message: `[<ISO time>] <Inbound|Outbound> (<sender>): <body>`.
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Contact, Message } from '../db/entities/index.ts';
import { PLACEHOLDER_EMAIL } from '../contacts/contact-record.ts';
import { requireContact } from '../contacts/find-contact.ts';
import { findContactMessages } from './list-contact-messages.ts';
import { publicDirection, senderOf } from './message-record.ts';

export type ChatExport = {
  contactId: string;
  contactName: string;
  phoneNumber: string;
  email: string;
  messageCount: number;
  chatExport: string;
};

export function contactDisplayName(contact: Pick<Contact, 'firstName' | 'lastName'>): string {
  return [contact.firstName, contact.lastName].filter((part) => part.trim()).join(' ');
}

/**
 * A body on one line: each run of white space that holds a line break becomes one space.
 * Matching whole runs (`\s+`) and looking inside each keeps it linear; a pattern that
 * backtracks over a run without a line break (`\s*[\r\n]+\s*`) is quadratic in its length.
 */
export function bodyOnOneLine(body: string): string {
  return body.replace(/\s+/g, (run) => (run.includes('\n') || run.includes('\r') ? ' ' : run)).trim();
}

/** One message as one line, so each message stays on its line. */
export function formatChatLine(message: Pick<Message, 'createdAt' | 'direction' | 'sender' | 'body'>): string {
  const direction = publicDirection(message.direction) === 'inbound' ? 'Inbound' : 'Outbound';
  return `[${message.createdAt.toISOString()}] ${direction} (${senderOf(message)}): ${bodyOnOneLine(message.body)}`;
}

export function formatChat(messages: Message[]): string {
  return messages.map(formatChatLine).join('\n');
}

export async function exportChat(em: EntityManager, accountId: string, contactId: string): Promise<ChatExport> {
  const contact = await requireContact(em, accountId, contactId);
  const messages = await findContactMessages(em, accountId, contact.id);
  return {
    contactId: contact.id,
    contactName: contactDisplayName(contact),
    phoneNumber: contact.phoneNumber ?? '',
    email: contact.email ?? PLACEHOLDER_EMAIL,
    messageCount: messages.length,
    chatExport: formatChat(messages),
  };
}
