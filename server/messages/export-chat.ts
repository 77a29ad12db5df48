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

/** One message as one line; line breaks inside the body become spaces so each message stays on its line. */
export function formatChatLine(message: Pick<Message, 'createdAt' | 'direction' | 'sender' | 'body'>): string {
  const direction = publicDirection(message.direction) === 'inbound' ? 'Inbound' : 'Outbound';
  const body = message.body.replace(/\s*[\r\n]+\s*/g, ' ').trim();
  return `[${message.createdAt.toISOString()}] ${direction} (${senderOf(message)}): ${body}`;
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
