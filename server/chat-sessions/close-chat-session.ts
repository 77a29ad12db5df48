// POST /contacts/{contactId}/chat-sessions/close: ends the contact's open
// session and announces it (Chat Concluded) in the same transaction.
import type { EntityManager } from '@mikro-orm/postgresql';
import { ChatSession } from '../db/entities/index.ts';
import { flushOwned } from '../db/update-owned.ts';
import { NotFoundError } from '../errors.ts';
import { emit } from '../events/emit.ts';
import { contactEventBlock, contactTagIds } from '../messages/contact-event-data.ts';
import { toChatSession, type ChatSessionRecord } from './session-record.ts';
import { lockContact } from '../contacts/find-contact.ts';

export async function closeChatSession(em: EntityManager, accountId: string, contactId: string): Promise<ChatSessionRecord> {
  return em.transactional(async (tx) => {
    // Locked like recordMessage does, so a message cannot slip into the session while it closes.
    const contact = await lockContact(tx, accountId, contactId);
    const session = await tx.findOne(ChatSession, { account: accountId, contact: contact.id, status: 'ChatSessionOpened' });
    if (!session) throw new NotFoundError('No open chat session for this contact');
    session.status = 'ChatSessionClosed';
    session.endedAt = new Date();
    await flushOwned(tx, session);
    const record = toChatSession(session);
    await emit(tx, accountId, 'Chat Concluded', {
      kind: 'chat_session_closed',
      session: record,
      contact: contactEventBlock(contact),
      tags: await contactTagIds(tx, accountId, contact.id),
    });
    return record;
  });
}
