import { defineEntity, p } from '@mikro-orm/core';
import { Account } from './account.ts';
import { ChatSession } from './chat-session.ts';
import { Contact } from './contact.ts';

export const MessageSchema = defineEntity({
  name: 'Message',
  tableName: 'messages',
  properties: {
    id: p.text().primary(),
    // No key of its own: the contact key (contact_id, account_id) holds it.
    account: () => p.manyToOne(Account).ref().createForeignKeyConstraint(false).index(false),
    contact: () => p.manyToOne(Contact).ref().deleteRule('cascade').index(false),
    session: () => p.manyToOne(ChatSession).ref().nullable().deleteRule('cascade').index(false),
    direction: p.enum(['inbound', 'outbound', 'outbound-api'] as const),
    body: p.text(),
    type: p.text().default('text'),
    channel: p.text().default('api'),
    status: p.text().default('received'),
    /** Who wrote it: `contact`, `bot`, or for a reply the credential (a key's label, a person's name, `api`). */
    sender: p.text().nullable(),
    /** The name a reply shows the visitor; null for the visitor's own messages and the bot's. */
    senderName: p.text().nullable(),
    mediaUrl: p.text().nullable(),
    mediaContentType: p.text().nullable(),
    externalId: p.text().nullable(),
    /** The messaging provider's id (wamid) of a message sent or received through it; callbacks find messages by it. */
    providerMessageId: p.text().nullable(),
    /** The template a template send used. */
    templateId: p.text().nullable(),
    readAt: p.datetime().nullable(),
    createdAt: p.datetime().defaultRaw('now()'),
  },
  indexes: [
    { properties: ['contact', 'createdAt'], name: 'messages_contact_id_created_at_index' },
    { properties: ['session', 'createdAt'], name: 'messages_session_id_created_at_index' },
    // Daily summaries read an account's messages of one day.
    { properties: ['account', 'createdAt'], name: 'messages_account_id_created_at_index' },
    // A widget's retried message finds its first one by the widget's id for it; a bot turn its reply.
    { properties: ['contact', 'externalId'], name: 'messages_contact_id_external_id_index', where: 'external_id is not null' },
  ],
  uniques: [
    // A provider callback retried for the same message finds the row it stored the first time.
    { properties: ['account', 'providerMessageId'], name: 'messages_account_id_provider_message_id_unique', where: 'provider_message_id is not null' },
  ],
});

export class Message extends MessageSchema.class {}
MessageSchema.setClass(Message);
