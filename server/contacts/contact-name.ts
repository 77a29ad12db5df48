// How a contact is named to the account's people (the recent sessions' `contact_name`, the chat
// export's `contactName`): the names it was given, else what is known of it (its e-mail, its
// phone number), else "Visitor" and a short suffix of its own, so an unnamed chat-widget
// visitor is never "Unknown Unknown" and two of them are told apart. The suffix comes from the
// contact id, never from the widget visitor id (the visitor's credential).
import { createHash } from 'node:crypto';
import type { Contact } from '../db/entities/index.ts';
import { PLACEHOLDER_EMAIL, PLACEHOLDER_NAME } from './contact-record.ts';

export type NamedContact = Pick<Contact, 'id' | 'firstName' | 'lastName' | 'email' | 'phoneNumber'>;

/** A name part that was given: not blank, not the stored default. */
function given(name: string | null | undefined): string | null {
  const text = name?.trim();
  return text && text !== PLACEHOLDER_NAME ? text : null;
}

/** Six hex digits of the contact id's hash: stable, and as unlike for two visitors as their ids. */
export function visitorSuffix(contactId: string): string {
  return createHash('sha256').update(contactId).digest('hex').slice(0, 6);
}

export function contactDisplayName(contact: NamedContact): string {
  const names = [given(contact.firstName), given(contact.lastName)].filter((part) => part !== null);
  if (names.length > 0) return names.join(' ');
  const email = contact.email?.trim();
  if (email && email !== PLACEHOLDER_EMAIL) return email;
  if (contact.phoneNumber) return contact.phoneNumber;
  return `Visitor ${visitorSuffix(contact.id)}`;
}
