// POST /contacts/{contactId}/typing: the typing indicator a widget visitor sees while
// someone answers through the API. Section Messages: typing is part of replying.
import { z } from 'zod';
import { setTyping, TYPING_TTL_SECONDS } from '../../server/widgets/set-typing.ts';
import { accountProcedure } from '../../server/trpc.ts';
import { SuccessOnly } from '../shared-schemas.ts';

export const typingProcedure = accountProcedure
  .meta({
    openapi: {
      method: 'POST',
      path: '/contacts/{contactId}/typing',
      tags: ['Messages'],
      summary: `Show or hide the typing indicator to a chat-widget visitor (on for at most ${TYPING_TTL_SECONDS} s unless renewed; a contact that is not a visitor: no change)`,
    },
    section: 'Messages',
    access: 'write',
    errorShapes: { '404': 'envelope' },
  })
  .input(z.object({ contactId: z.string(), typing: z.boolean({ error: 'typing must be true or false' }) }))
  .output(SuccessOnly)
  .mutation(async ({ ctx, input }) => {
    await setTyping(ctx.em, ctx.account.id, input.contactId, input.typing);
    return { success: true as const };
  });
