// Contacts: create, look up or page through, update, and list membership.
import { z } from 'zod';
import { createContact, ContactCreateInput } from '../../server/contacts/create-contact.ts';
import { addContactToList, removeContactFromList } from '../../server/contacts/contact-list-membership.ts';
import { findContactIdByIdentifier } from '../../server/contacts/find-contact.ts';
import { listContacts } from '../../server/contacts/list-contacts.ts';
import { updateContact, ContactUpdateInput } from '../../server/contacts/update-contact.ts';
import { PageInput } from '../../server/pagination.ts';
import { accountProcedure, router } from '../../server/trpc.ts';
import { ContactRecord } from '../../server/contacts/contact-record.ts';
import { AT_LEAST_ONE_FIELD } from '../../server/http/openapi.ts';
import { PhoneNumberText } from '../../server/contacts/phone.ts';

const MembershipInput = z.object({ contactId: z.string().optional(), listId: z.string().optional() });
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
        summary: 'Look up a contact by phone number or e-mail; without them, page through contacts with limit/cursor',
      },
      section: 'Contacts',
      access: 'read',
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
    .input(PageInput.extend({ phoneNumber: PhoneNumberText.optional(), email: z.string().optional() }))
    .output(
      z.union([
        z.object({ success: z.literal(true), contactId: z.string() }),
        z.object({ success: z.literal(true), contacts: z.array(ContactRecord), next_cursor: z.string().nullable() }),
      ]),
    )
    .query(async ({ ctx, input }) => {
      const lookup = input.phoneNumber !== undefined || input.email !== undefined;
      if (!lookup && (input.limit !== undefined || input.cursor !== undefined)) {
        return { success: true as const, ...(await listContacts(ctx.em, ctx.services.secrets, ctx.account.id, input)) };
      }
      return { success: true as const, contactId: await findContactIdByIdentifier(ctx.services.pool, ctx.account.id, input) };
    }),

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
    })
    .input(MembershipInput)
    .output(z.object({ success: z.literal(true), message: z.string() }))
    .mutation(async ({ ctx, input }) => ({ success: true as const, ...(await removeContactFromList(ctx.em, ctx.account.id, input)) })),
});

