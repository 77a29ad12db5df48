// Tags: assign a contact to a tag (creating it), list tags, one tag by name,
// and a contact's tags.
import { z } from 'zod';
import { NON_BLANK_TEXT_PATTERN } from '../../server/input-rules.ts';
import { assignTag, TagAssignInput } from '../../server/tags/assign-tag.ts';
import { getTagByName } from '../../server/tags/find-tag.ts';
import { listContactTags } from '../../server/tags/list-contact-tags.ts';
import { listTags } from '../../server/tags/list-tags.ts';
import { TagRecord } from '../../server/tags/tag-record.ts';
import { accountProcedure, router } from '../../server/trpc.ts';

export const tagsRouter = router({
  assign: accountProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/tags',
        tags: ['Tags'],
        summary: 'Add a contact (by phoneNumber or email) to a tag, creating the tag when new; a new assignment costs one credit',
        description: 'One of phoneNumber and email (not blank) is required: 400 "Missing required parameters: phoneNumber or email" otherwise.',
      },
      section: 'Tags',
      access: 'write',
      successStatus: 201,
      queryFields: ['tag', 'phoneNumber', 'email'],
      requiredFields: ['tag'],
      // The envelope (the default), listed so the OpenAPI document shows these statuses.
      errorShapes: { '402': 'envelope', '404': 'envelope' },
    })
    .input(TagAssignInput)
    .output(z.object({ success: z.literal(true), data: TagRecord }))
    .mutation(async ({ ctx, input }) => ({ success: true as const, data: await assignTag(ctx.em, ctx.account.id, input) })),

  list: accountProcedure
    .meta({ openapi: { method: 'GET', path: '/tags', tags: ['Tags'], summary: "The account's tags" }, section: 'Tags', access: 'read' })
    .input(z.object({}))
    .output(z.array(TagRecord))
    .query(async ({ ctx }) => listTags(ctx.em, ctx.account.id)),

  get: accountProcedure
    .meta({
      openapi: { method: 'GET', path: '/tags/{name}', tags: ['Tags'], summary: 'One tag by name' },
      section: 'Tags',
      access: 'read',
      errorShapes: { '404': 'envelope' },
    })
    .input(z.object({ name: z.string() }))
    .output(TagRecord)
    .query(async ({ ctx, input }) => getTagByName(ctx.em, ctx.account.id, input.name)),

  ofContact: accountProcedure
    .meta({
      openapi: { method: 'GET', path: '/contacts/tags/{contactId}', tags: ['Tags'], summary: "A contact's tags" },
      section: 'Tags',
      access: 'read',
      errorShapes: { '400': 'message', '401': 'successError', '404': 'successError' },
    })
    // A blank id is 400 "Missing required parameter" (list-contact-tags.ts).
    .input(z.object({ contactId: z.string().meta({ pattern: NON_BLANK_TEXT_PATTERN }) }))
    .output(z.array(TagRecord))
    .query(async ({ ctx, input }) => listContactTags(ctx.em, ctx.account.id, input.contactId)),
});
