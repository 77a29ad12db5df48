// The one way a message is written (API reads, chat widget, template sends):
// it lands in the contact's open chat session, opening one when none is open,
// and its events are written in the same transaction.
// A widget visitor's message writes the same rows in SQL on the request's hot path
// (server/widgets/sql/store-visitor-message.ts): a change to the session or Replies
// rule here changes there too.
import { TransactionPropagation } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { ChatSession, Message } from '../db/entities/index.ts';
import { newId } from '../db/ids.ts';
import { emit } from '../events/emit.ts';
import { contactEventBlock } from './contact-event-data.ts';
import { toMessageEventData } from './message-record.ts';
import { lockContact } from '../contacts/find-contact.ts';

export type RecordMessageInput = {
  contactId: string;
  direction: 'inbound' | 'outbound' | 'outbound-api';
  body: string;
  type?: string;
  channel?: string;
  /** Delivery status; `received` for inbound and `sent` for outbound when unset. */
  status?: string;
  sender?: string | null;
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
};

export type RecordedMessage = { messageId: string; sessionId: string; sessionOpened: boolean; message: Message };

/**
 * Emits `New Message` for every message, and `Replies` for an inbound message
 * that answers an outbound one: the first inbound message after an outbound
 * message of the same session (later inbound messages answer nothing new).
 */
export async function recordMessage(em: EntityManager, accountId: string, input: RecordMessageInput): Promise<RecordedMessage> {
  // In a caller's transaction, part of it (no savepoint: every caller's failure aborts the whole).
  return em.transactional(async (tx) => {
    // The contact's row lock serialises its messages, so two at once cannot both open a session.
    const contact = await lockContact(tx, accountId, input.contactId);
    const now = new Date();

    let session = await tx.findOne(ChatSession, { contact: contact.id, status: 'ChatSessionOpened' });
    const sessionOpened = !session;
    if (!session && input.reopenClosedSession) {
      session = await tx.findOne(ChatSession, { contact: contact.id }, { orderBy: { startedAt: 'desc', id: 'desc' } });
      if (session) {
        session.status = 'ChatSessionOpened';
        session.endedAt = null;
      }
    }
    const isNew = !session;
    if (!session) {
      session = tx.create(ChatSession, {
        id: newId('cs'),
        account: accountId,
        contact: contact.id,
        status: 'ChatSessionOpened',
        tag: null,
        startedAt: now,
        endedAt: null,
      });
      tx.persist(session);
    }
    const previous = isNew
      ? null
      : await tx.findOne(Message, { session: session.id }, { orderBy: { createdAt: 'desc', id: 'desc' }, fields: ['id', 'direction'] });

    const message = tx.create(Message, {
      id: newId('msg'),
      account: accountId,
      contact: contact.id,
      session: session.id,
      direction: input.direction,
      body: input.body,
      type: input.type ?? 'text',
      channel: input.channel ?? contact.channel ?? 'api',
      status: input.status ?? (input.direction === 'inbound' ? 'received' : 'sent'),
      sender: input.sender ?? null,
      mediaUrl: input.mediaUrl ?? null,
      mediaContentType: input.mediaContentType ?? null,
      externalId: input.externalId ?? null,
      providerMessageId: input.providerMessageId ?? null,
      templateId: input.templateId ?? null,
      readAt: null,
      createdAt: now,
    });
    tx.persist(message);

    const data = { message: toMessageEventData(message, session.id), contact: contactEventBlock(contact) };
    await emit(tx, accountId, 'New Message', data);
    if (input.direction === 'inbound' && previous && previous.direction !== 'inbound') {
      await emit(tx, accountId, 'Replies', { ...data, in_reply_to: previous.id });
    }
    return { messageId: message.id, sessionId: session.id, sessionOpened, message };
  }, { propagation: TransactionPropagation.REQUIRED });
}
