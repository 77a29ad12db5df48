// POST /contacts: the contact, its list memberships and its event in one statement,
// after every list was checked for existence, then for permission.
import { UniqueConstraintViolationException, type EntityManager } from '@mikro-orm/postgresql';
import type pg from 'pg';
import { z } from 'zod';
import { newId } from '../db/ids.ts';
import { queryRows, sql } from '../db/sql.ts';
import { ConflictError, NotFoundError } from '../errors.ts';
import { newEventRow } from '../events/sql/insert-events.ts';
import { refuseListsForContacts } from './contact-list-membership.ts';
import { normalisePhoneNumber, PhoneNumberText } from './phone.ts';
import { insertContactWithLists } from './sql/insert-contact.ts';

const nullableString = z.string().nullable().optional();

export const ContactCreateInput = z.object({
  phoneNumber: PhoneNumberText.min(1, 'phoneNumber is required'),
  firstName: z.string().optional(),
  lastName: z.string().optional(),
  email: z.email('email must be a valid e-mail address').optional(),
  is_bot_active: z.boolean().optional(),
  listId: z.string().min(1).optional(),
  listIds: z.array(z.string().min(1)).optional(),
  instagramId: nullableString,
  currentCampaign: nullableString,
  currentCampaignData: z.record(z.string(), z.unknown()).nullable().optional(),
  channel: nullableString,
  isChatWindowOpen: z.boolean().optional(),
  externalId: nullableString,
  customChannel: nullableString,
  chatWidgetId: nullableString,
  do_not_disturb: z.boolean().optional(),
});
export type ContactCreateInput = z.infer<typeof ContactCreateInput>;

export type ContactCreated = { message: string; contactId: string; listsAdded: string[] };

/** `pool`: the request's pool, for the prepared statement when `em` is not in a transaction. */
export async function createContact(em: EntityManager, accountId: string, input: ContactCreateInput, pool?: pg.Pool): Promise<ContactCreated> {
  const phoneNumber = normalisePhoneNumber(input.phoneNumber);
  // listIds takes precedence over listId when both are sent.
  const listIds = [...new Set(input.listIds ?? (input.listId ? [input.listId] : []))];

  // Another account's widget is not found, like any object of another account.
  if (input.chatWidgetId) {
    const [widget] = await queryRows(em, sql`select 1 from chat_widgets where id = ${input.chatWidgetId} and account_id = ${accountId}`);
    if (!widget) throw new NotFoundError(`Chat widget ${input.chatWidgetId} not found`);
  }

  const contactId = newId('ct');
  const email = input.email ?? null;
  try {
    const outcome = await insertContactWithLists(
      em,
      {
        id: contactId,
        accountId,
        phoneNumber,
        email,
        firstName: input.firstName?.trim() || 'Unknown',
        lastName: input.lastName?.trim() || 'Unknown',
        isBotActive: input.is_bot_active ?? true,
        doNotDisturb: input.do_not_disturb ?? false,
        instagramId: input.instagramId ?? null,
        currentCampaign: input.currentCampaign ?? null,
        currentCampaignData: input.currentCampaignData ?? null,
        channel: input.channel ?? null,
        isChatWindowOpen: input.isChatWindowOpen ?? false,
        externalId: input.externalId ?? null,
        customChannel: input.customChannel ?? null,
        chatWidgetId: input.chatWidgetId ?? null,
      },
      listIds,
      newEventRow('Contact Created', { contact: { id: contactId, phone_number: phoneNumber, email, lists: listIds } }),
      pool,
    );
    if (!outcome.written) refuseListsForContacts(accountId, listIds, outcome.lists);
  } catch (error) {
    // From the ORM (in a transaction) or from pg itself (the prepared statement).
    if (error instanceof UniqueConstraintViolationException || (error as { code?: unknown }).code === '23505') {
      throw new ConflictError('A contact with that phone number already exists');
    }
    throw error;
  }
  return { message: 'Contact created successfully', contactId, listsAdded: listIds };
}
