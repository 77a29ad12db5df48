// How a contact is shown in listings.
import type { Contact } from '../db/entities/index.ts';

export const PLACEHOLDER_EMAIL = 'no-email@placeholder.invalid';

export type ContactRecord = {
  id: string;
  first_name: string;
  last_name: string;
  phone_number: string;
  email: string;
  is_bot_active: boolean;
  do_not_disturb: boolean;
  /** The 24-hour customer-service window opened by the contact's last inbound message. */
  is_chat_window_open: boolean;
  channel: string | null;
  external_id: string | null;
  created_at: string;
  updated_at: string;
};

export function toContactRecord(contact: Contact): ContactRecord {
  return {
    id: contact.id,
    first_name: contact.firstName,
    last_name: contact.lastName,
    phone_number: contact.phoneNumber ?? '',
    email: contact.email ?? PLACEHOLDER_EMAIL,
    is_bot_active: contact.isBotActive,
    do_not_disturb: contact.doNotDisturb,
    is_chat_window_open: contact.isChatWindowOpen,
    channel: contact.channel ?? null,
    external_id: contact.externalId ?? null,
    created_at: contact.createdAt.toISOString(),
    updated_at: contact.updatedAt.toISOString(),
  };
}
