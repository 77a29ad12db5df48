// Contacts: create, look up or page through, read one, update, list membership, archiving,
// the business's read mark and the hand-off.
import { z } from 'zod';
import { createContact, ContactCreateInput } from '../../server/contacts/create-contact.ts';
import { archiveContact, unarchiveContact } from '../../server/contacts/archive-contact.ts';
import { addContactToList, removeContactFromList } from '../../server/contacts/contact-list-membership.ts';
import { MAX_HANDOFF_MESSAGE_LENGTH, MAX_HANDOFF_REASON_LENGTH } from '../../server/contacts/hand-off.ts';
import { handOffConversation } from '../../server/widgets/hand-off-conversation.ts';
import { contactLookupRead, findContactIdByIdentifier } from '../../server/contacts/find-contact.ts';
import { checkContactsCursor, listContacts } from '../../server/contacts/list-contacts.ts';
import { updateContact, ContactUpdateInput } from '../../server/contacts/update-contact.ts';
import { PageInput } from '../../server/pagination.ts';
import { accountProcedure, router } from '../../server/trpc.ts';
import { ContactRecord } from '../../server/contacts/contact-record.ts';
import { ContactDetailsRecord } from '../../server/contacts/contact-details-record.ts';
import { getContact } from '../../server/contacts/get-contact.ts';
import { markContactRead } from '../../server/contacts/mark-contact-read.ts';
import { AT_LEAST_ONE_FIELD } from '../../server/http/openapi.ts';
import { PhoneNumberOrBlank } from '../../server/contacts/phone.ts';
import { queryFlag } from '../shared-schemas.ts';

// Optional here so that a missing one is refused in the spec's words (contact-list-membership.ts); required in the document.
const MembershipInput = z.object({ contactId: z.string().meta({ minLength: 1 }).optional(), listId: z.string().meta({ minLength: 1 }).optional() });
const Archived = queryFlag('archived').describe('true: page through the archived contacts only; false or absent: the contacts that are not archived.');
const ContactId = z.object({ contactId: z.string() });
const ArchiveStateOutput = z.object({ success: z.literal(true), data: z.object({ contactId: z.string(), archived: z.boolean() }) });
const membershipShapes = { '400': 'text', '401': 'text', '403': 'text', '404': 'message', '500': 'message' } as const;

export const contactsRouter = router({
  create: accountProcedure
    .meta({
      openapi: { method: 'POST', path: '/contacts', tags: ['Contacts'], summary: 'Create a contact, optionally on lists' },
      section: 'Contacts',
      access: 'write',
      errorShapes: { '404': 'envelope', '409': 'envelope', '401': 'successError' },
    })
    .input(ContactCreateInput)
    .output(z.object({ success: z.literal(true), data: z.object({ message: z.string(), contactId: z.string(), listsAdded: z.array(z.string()) }) }))
    .mutation(async ({ ctx, input }) => ({ success: true as const, data: await createContact(ctx.em, ctx.account.id, input, ctx.services.pool) })),

  find: accountProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/contacts',
        tags: ['Contacts'],
        summary:
          'Look up a contact by phone number or e-mail (archived ones too); without either, page through contacts with limit/cursor/archived (the first page when no parameter is sent)',
      },
      section: 'Contacts',
      access: 'read',
      callerRead: contactLookupRead,
      errorShapes: {
        '400': 'text',
        '400:invalid_phone': 'error',
        '400:invalid_cursor': 'envelope',
        '400:invalid_input': 'envelope',
        '401': 'text',
        '404': 'message',
        '500': 'message',
      },
    })
    .input(PageInput.extend({ phoneNumber: PhoneNumberOrBlank.optional(), email: z.string().optional(), archived: Archived }))
    .output(
      z.union([
        z.object({ success: z.literal(true), contactId: z.string() }),
        z.object({ success: z.literal(true), contacts: z.array(ContactRecord), next_cursor: z.string().nullable() }),
      ]),
    )
    .query(async ({ ctx, input }) => {
      // Neither identifier (blank is absent): a listing, so that each parameter's own value
      // decides what the request is (a rule the OpenAPI document can state).
      const lookup = Boolean(input.phoneNumber?.trim() || input.email?.trim());
      if (!lookup) return { success: true as const, ...(await listContacts(ctx.em, ctx.services.secrets, ctx.account.id, input)) };
      checkContactsCursor(ctx.services.secrets, ctx.account.id, input);
      return { success: true as const, contactId: await findContactIdByIdentifier(ctx.services.pool, ctx.account.id, input, ctx.callerRead) };
    }),

  get: accountProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/contacts/{contactId}',
        tags: ['Contacts'],
        summary: 'One contact: its fields, flags and tags, and for a chat-widget visitor what the widget page reported',
        description: "404 for an unknown id or another account's contact.",
      },
      section: 'Contacts',
      access: 'read',
      errorShapes: { '404': 'successError' },
    })
    .input(ContactId)
    .output(z.object({ success: z.literal(true), data: ContactDetailsRecord }))
    .query(async ({ ctx, input }) => ({ success: true as const, data: await getContact(ctx.em, ctx.account.id, input.contactId) })),

  update: accountProcedure
    .meta({
      openapi: { method: 'PUT', path: '/contacts/{contactId}', tags: ['Contacts'], summary: 'Update a contact' },
      section: 'Contacts',
      access: 'write',
      errorShapes: { '400': 'message', '401': 'text', '404': 'message', '500': 'envelope' },
      bodyConstraints: AT_LEAST_ONE_FIELD,
    })
    .input(ContactUpdateInput.extend({ contactId: z.string() }))
    .output(z.object({ success: z.literal(true), message: z.string() }))
    .mutation(async ({ ctx, input }) => {
      const { contactId, ...fields } = input;
      return { success: true as const, ...(await updateContact(ctx.em, ctx.account.id, contactId, fields)) };
    }),

  addToList: accountProcedure
    .meta({
      openapi: { method: 'POST', path: '/contacts/lists', tags: ['Contacts'], summary: 'Add a contact to a list' },
      section: 'Contacts',
      access: 'write',
      errorShapes: membershipShapes,
      requiredFields: ['contactId', 'listId'],
    })
    .input(MembershipInput)
    .output(z.object({ success: z.literal(true), message: z.string() }))
    .mutation(async ({ ctx, input }) => ({ success: true as const, ...(await addContactToList(ctx.em, ctx.account.id, input)) })),

  removeFromList: accountProcedure
    .meta({
      openapi: { method: 'DELETE', path: '/contacts/lists', tags: ['Contacts'], summary: 'Remove a contact from a list' },
      section: 'Contacts',
      access: 'write',
      errorShapes: membershipShapes,
      requiredFields: ['contactId', 'listId'],
    })
    .input(MembershipInput)
    .output(z.object({ success: z.literal(true), message: z.string() }))
    .mutation(async ({ ctx, input }) => ({ success: true as const, ...(await removeContactFromList(ctx.em, ctx.account.id, input)) })),

  archive: accountProcedure
    .meta({
      openapi: { method: 'POST', path: '/contacts/{contactId}/archive', tags: ['Contacts'], summary: 'Archive a contact: it leaves GET /contacts pages; lookups still find it' },
      section: 'Contacts',
      access: 'write',
      errorShapes: { '404': 'envelope' },
    })
    .input(ContactId)
    .output(ArchiveStateOutput)
    .mutation(async ({ ctx, input }) => ({ success: true as const, data: await archiveContact(ctx.em, ctx.account.id, input.contactId) })),

  unarchive: accountProcedure
    .meta({
      openapi: { method: 'POST', path: '/contacts/{contactId}/unarchive', tags: ['Contacts'], summary: 'Unarchive a contact (emits Contact Unarchived when it was archived)' },
      section: 'Contacts',
      access: 'write',
      errorShapes: { '404': 'envelope' },
    })
    .input(ContactId)
    .output(ArchiveStateOutput)
    .mutation(async ({ ctx, input }) => ({ success: true as const, data: await unarchiveContact(ctx.em, ctx.account.id, input.contactId) })),

  markRead: accountProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/contacts/{contactId}/read',
        tags: ['Messages'],
        summary: "The business has read the contact's conversation up to now: the recent sessions' unread_count starts again from 0",
      },
      section: 'Messages',
      access: 'write',
      errorShapes: { '404': 'envelope' },
    })
    .input(ContactId)
    .output(z.object({ success: z.literal(true), data: z.object({ contactId: z.string(), unread_count: z.literal(0) }) }))
    .mutation(async ({ ctx, input }) => ({ success: true as const, data: await markContactRead(ctx.em, ctx.account.id, input.contactId) })),

  handoff: accountProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/contacts/{contactId}/handoff',
        tags: ['Contacts'],
        summary: 'Hand the conversation to a person: the bot stops for the contact (Contact Paused when it was active) and Human Alerted is emitted once per open chat session',
        description:
          "A chat-widget visitor is told a person will answer, once per chat session: in the words of `message` when given, else the widget's `settings.handoffMessage`.",
      },
      section: 'Contacts',
      access: 'write',
      errorShapes: { '404': 'envelope' },
    })
    .input(
      ContactId.extend({
        reason: z.string().max(MAX_HANDOFF_REASON_LENGTH, `must be at most ${MAX_HANDOFF_REASON_LENGTH} characters`).optional(),
        message: z
          .string()
          .min(1, 'must not be empty')
          .max(MAX_HANDOFF_MESSAGE_LENGTH, `must be at most ${MAX_HANDOFF_MESSAGE_LENGTH} characters`)
          .refine((text) => text.trim() !== '', 'must not be empty')
          .optional()
          .describe("What a chat-widget visitor is told instead of the widget's `settings.handoffMessage`."),
      }),
    )
    .output(z.object({ success: z.literal(true), data: z.object({ contactId: z.string(), is_bot_active: z.literal(false) }) }))
    .mutation(async ({ ctx, input }) => {
      await ctx.em.transactional((tx) =>
        handOffConversation(tx, ctx.account.id, input.contactId, { reason: input.reason ?? null, source: 'api', message: input.message ?? null }),
      );
      return { success: true as const, data: { contactId: input.contactId, is_bot_active: false as const } };
    }),
});
