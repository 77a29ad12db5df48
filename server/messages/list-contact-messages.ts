// GET /contacts/messages/{contactId}: the contact's conversation, oldest first: its newest
// CONTACT_MESSAGES_LIMIT messages, so a long conversation costs a bounded read.
import type { EntityManager } from '@mikro-orm/postgresql';
import { MissingParametersError } from '../errors.ts';
import { requireContact } from '../contacts/find-contact.ts';
import { toContactMessage, type ContactMessage } from './message-record.ts';
import { newestContactMessages } from './newest-messages.ts';

/** Most messages the list shows: the newest ones. */
export const CONTACT_MESSAGES_LIMIT = 1_000;

export async function listContactMessages(em: EntityManager, accountId: string, contactId: string): Promise<ContactMessage[]> {
  if (!contactId.trim()) throw new MissingParametersError('Missing required parameter: contactId');
  const contact = await requireContact(em, accountId, contactId);
  return (await newestContactMessages(em, accountId, contact.id, CONTACT_MESSAGES_LIMIT)).map(toContactMessage);
}
