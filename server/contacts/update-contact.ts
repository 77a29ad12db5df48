// PUT /contacts/{contactId}: the five updatable fields; flips of the bot and
// do-not-disturb flags are announced as events in the same transaction.
import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { Contact } from '../db/entities/index.ts';
import { InvalidInputError } from '../errors.ts';
import { runSql } from '../db/sql.ts';
import { flushOwned } from '../db/update-owned.ts';
import { emit } from '../events/emit.ts';
import { eventsOf, insertEventsSql, newEventRow, type EventRow } from '../events/sql/insert-events.ts';
import { lockContact } from './find-contact.ts';

export const ContactUpdateInput = z.object({
  firstName: z.string().min(1, 'firstName must not be empty').optional(),
  lastName: z.string().min(1, 'lastName must not be empty').optional(),
  email: z.email('email must be a valid e-mail address').optional(),
  is_bot_active: z.boolean().optional(),
  do_not_disturb: z.boolean().optional(),
});
export type ContactUpdateInput = z.infer<typeof ContactUpdateInput>;

/** What the contact flag events (Contact Paused, Resumed, Do Not Disturb) say about the contact. */
export type ContactFlagBlock = { id: string; phone_number: string | null; email: string | null };

/** Contact Paused or Contact Resumed when the bot flag flipped (none when it did not), to compose into a change's statement. */
export function botFlipEvents(contact: ContactFlagBlock, wasActive: boolean, isActive: boolean): EventRow[] {
  if (wasActive === isActive) return [];
  return [newEventRow(isActive ? 'Contact Resumed' : 'Contact Paused', { contact })];
}

/** The same, written on `em`'s transaction (PUT /contacts, a hand-off). */
export async function announceBotFlip(em: EntityManager, accountId: string, contact: ContactFlagBlock, wasActive: boolean, isActive: boolean): Promise<void> {
  const events = botFlipEvents(contact, wasActive, isActive);
  if (events.length > 0) await runSql(em, insertEventsSql(eventsOf(accountId, events)));
}

export async function updateContact(
  em: EntityManager,
  accountId: string,
  contactId: string,
  input: ContactUpdateInput,
): Promise<{ message: string }> {
  const fields = Object.entries(input).filter(([, value]) => value !== undefined);
  if (fields.length === 0) throw new InvalidInputError('No fields to update', { reason: 'no_fields' });
  await em.transactional(async (tx) => {
    const contact = await lockContact(tx, accountId, contactId);
    const wasBotActive = contact.isBotActive;
    const wasDoNotDisturb = contact.doNotDisturb;
    if (input.firstName !== undefined) contact.firstName = input.firstName;
    if (input.lastName !== undefined) contact.lastName = input.lastName;
    if (input.email !== undefined) contact.email = input.email;
    if (input.is_bot_active !== undefined) contact.isBotActive = input.is_bot_active;
    if (input.do_not_disturb !== undefined) contact.doNotDisturb = input.do_not_disturb;
    contact.updatedAt = new Date();
    await flushOwned(tx, contact);
    const block: ContactFlagBlock = { id: contact.id, phone_number: contact.phoneNumber ?? null, email: contact.email ?? null };
    await announceBotFlip(tx, accountId, block, wasBotActive, contact.isBotActive);
    if (!wasDoNotDisturb && contact.doNotDisturb) await emit(tx, accountId, 'Contact Do Not Disturb', { contact: block });
  });
  return { message: 'Contact updated successfully' };
}
