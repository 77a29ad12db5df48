// A message written for a contact known by id (API sends, provider callbacks, template
// sends, the bot's replies): the contact locked and the message stored by the one writer of
// messages (sql/insert-message.ts, which holds the session and Replies rules). A person's
// reply also stops the bot for the contact, in the message's own statement.
import { TransactionPropagation } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { sql } from '../db/sql.ts';
import { lockContact } from '../contacts/find-contact.ts';
import { botFlipEvents } from '../contacts/update-contact.ts';
import { contactEventBlock } from './contact-event-data.ts';
import { insertMessage, type StoredMessage } from './sql/insert-message.ts';

export type RecordMessageInput = {
  contactId: string;
  direction: 'inbound' | 'outbound' | 'outbound-api';
  body: string;
  type?: string;
  channel?: string;
  /** Delivery status; `received` for inbound and `sent` for outbound when unset. */
  status?: string;
  sender?: string | null;
  /** The name a reply shows the visitor. */
  senderName?: string | null;
  mediaUrl?: string | null;
  mediaContentType?: string | null;
  externalId?: string | null;
  /** The messaging provider's id of the message (sent or received through it). */
  providerMessageId?: string | null;
  /** The template a template send used. */
  templateId?: string | null;
  /**
   * With no open session, reopen the contact's latest closed one instead of starting a new
   * one: the spec's transition for a template send to a closed chat.
   */
  reopenClosedSession?: boolean;
  /**
   * A person or an app answered: the bot stops for the contact (`is_bot_active` false, Contact
   * Paused when it was on) until PUT /contacts/{id} turns it on again.
   */
  pausesBot?: boolean;
};

export type RecordedMessage = { messageId: string; sessionId: string; sessionOpened: boolean; message: StoredMessage };

/** The message, its session and its events (sql/insert-message.ts), on `em`'s transaction or a new one. */
export async function recordMessage(em: EntityManager, accountId: string, input: RecordMessageInput): Promise<RecordedMessage> {
  // In a caller's transaction, part of it (no savepoint: every caller's failure aborts the whole).
  return em.transactional(async (tx) => {
    // The contact's row lock serialises its messages, so two at once cannot both open a session.
    const contact = await lockContact(tx, accountId, input.contactId);
    const written = await insertMessage(tx, {
      accountId,
      contact: contactEventBlock(contact),
      direction: input.direction,
      body: input.body,
      type: input.type ?? 'text',
      channel: input.channel ?? contact.channel ?? 'api',
      status: input.status ?? (input.direction === 'inbound' ? 'received' : 'sent'),
      sender: input.sender ?? null,
      senderName: input.senderName ?? null,
      mediaUrl: input.mediaUrl ?? null,
      mediaContentType: input.mediaContentType ?? null,
      externalId: input.externalId ?? null,
      providerMessageId: input.providerMessageId ?? null,
      templateId: input.templateId ?? null,
      reopenClosedSession: input.reopenClosedSession,
    }, () =>
      // The entity keeps its loaded flag: changed only here, in SQL, so the ORM has nothing to flush.
      input.pausesBot && contact.isBotActive
        ? {
            writes: [sql`update contacts set is_bot_active = false, updated_at = now() where id = ${contact.id}::text and account_id = ${accountId}::text`],
            events: botFlipEvents({ id: contact.id, phone_number: contact.phoneNumber ?? null, email: contact.email ?? null }, true, false),
          }
        : {},
    );
    if (written.repeated) throw new Error('a message asked not to repeat came back as a repeat');
    return { messageId: written.message.id, sessionId: written.sessionId, sessionOpened: written.sessionOpened, message: written.message };
  }, { propagation: TransactionPropagation.REQUIRED });
}
