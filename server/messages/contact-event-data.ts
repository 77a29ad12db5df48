// What events about a conversation say about its contact: the contact block,
// and the contact's tag ids (webhook subscriptions filter on them).
import type { EntityManager } from '@mikro-orm/postgresql';
import { ContactTag, type Contact } from '../db/entities/index.ts';

export type ContactEventBlock = { id: string; phone_number: string | null; email: string | null; first_name: string; last_name: string };

export function contactEventBlock(contact: Contact): ContactEventBlock {
  return {
    id: contact.id,
    phone_number: contact.phoneNumber ?? null,
    email: contact.email ?? null,
    first_name: contact.firstName,
    last_name: contact.lastName,
  };
}

export async function contactTagIds(em: EntityManager, accountId: string, contactId: string): Promise<string[]> {
  const rows = await em.find(ContactTag, { account: accountId, contact: contactId }, { orderBy: { createdAt: 'asc', tag: 'asc' }, fields: ['tag'] });
  return rows.map((row) => row.tag.id);
}
