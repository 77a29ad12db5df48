// How a contact is shown in listings.
import { z } from 'zod';
import type { Contact } from '../db/entities/index.ts';

export const PLACEHOLDER_EMAIL = 'no-email@placeholder.invalid';
/** What a contact's first and last name are when none was given. */
export const PLACEHOLDER_NAME = 'Unknown';

export const ContactRecord = z.object({
  id: z.string(),
  first_name: z.string(),
  last_name: z.string(),
  phone_number: z.string(),
  email: z.string(),
  is_bot_active: z.boolean(),
  do_not_disturb: z.boolean(),
  /** The 24-hour customer-service window opened by the contact's last inbound message. */
  is_chat_window_open: z.boolean(),
  channel: z.string().nullable(),
  external_id: z.string().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
});
export type ContactRecord = z.infer<typeof ContactRecord>;

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
