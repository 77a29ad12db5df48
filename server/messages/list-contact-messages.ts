// GET /contacts/messages/{contactId}: the contact's whole conversation, oldest first.
import type { EntityManager } from '@mikro-orm/postgresql';
import { Message } from '../db/entities/index.ts';
import { MissingParametersError } from '../errors.ts';
import { requireContact } from '../contacts/find-contact.ts';
import { toContactMessage, type ContactMessage } from './message-record.ts';

/** Every message of a contact of the account, oldest first (ties by id). */
export async function findContactMessages(em: EntityManager, accountId: string, contactId: string): Promise<Message[]> {
  return em.find(Message, { account: accountId, contact: contactId }, { orderBy: { createdAt: 'asc', id: 'asc' } });
}

export async function listContactMessages(em: EntityManager, accountId: string, contactId: string): Promise<ContactMessage[]> {
  if (!contactId.trim()) throw new MissingParametersError('Missing required parameter: contactId');
  const contact = await requireContact(em, accountId, contactId);
  return (await findContactMessages(em, accountId, contact.id)).map(toContactMessage);
}
