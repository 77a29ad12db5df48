// Chat widgets of the account (the contract's endpoints): configure a widget, and read its
// current one-time code. What a visitor's browser calls is in routers/chat-widget-public.
import { z } from 'zod';
import { AT_LEAST_ONE_FIELD } from '../../server/http/openapi.ts';
import { accountProcedure, router } from '../../server/trpc.ts';
import { createWidget } from '../../server/widgets/create-widget.ts';
import { deleteWidget } from '../../server/widgets/delete-widget.ts';
import { getWidget, listWidgets } from '../../server/widgets/find-widget.ts';
import { updateWidget } from '../../server/widgets/update-widget.ts';
import { rotateIdentitySecret } from '../../server/widgets/rotate-identity-secret.ts';
import { currentWidgetOtp } from '../../server/widgets/widget-otp.ts';
import { ChatWidgetCreateInput, ChatWidgetUpdateInput } from '../../server/widgets/widget-settings.ts';
import { ChatWidgetRecord } from '../../server/widgets/widget-record.ts';
import { SuccessOnly } from '../shared-schemas.ts';
import { conversationEventsProcedure } from './subscription.ts';

const ChatWidgetData = z.object({ success: z.literal(true), data: ChatWidgetRecord });
const ConfigId = z.object({ configId: z.string().min(1, 'must not be empty').max(200) });

export const chatWidgetsRouter = router({
  create: accountProcedure
    .meta({ openapi: { method: 'POST', path: '/chat-widgets', tags: ['Chat Widget'], summary: 'Create a chat widget' }, section: 'Chat Widget', access: 'write', successStatus: 201 })
    .input(ChatWidgetCreateInput)
    .output(ChatWidgetData)
    .mutation(async ({ ctx, input }) => ({ success: true as const, data: await createWidget(ctx.em, ctx.services.secrets, ctx.account.id, input) })),

  list: accountProcedure
    .meta({ openapi: { method: 'GET', path: '/chat-widgets', tags: ['Chat Widget'], summary: 'List the chat widgets, newest first' }, section: 'Chat Widget', access: 'read' })
    .input(z.object({}))
    .output(z.object({ success: z.literal(true), data: z.array(ChatWidgetRecord) }))
    .query(async ({ ctx }) => ({ success: true as const, data: await listWidgets(ctx.em, ctx.account.id) })),

  get: accountProcedure
    .meta({ openapi: { method: 'GET', path: '/chat-widgets/{configId}', tags: ['Chat Widget'], summary: 'Get a chat widget' }, section: 'Chat Widget', access: 'read', errorShapes: { '404': 'envelope' } })
    .input(ConfigId)
    .output(ChatWidgetData)
    .query(async ({ ctx, input }) => ({ success: true as const, data: await getWidget(ctx.em, ctx.account.id, input.configId) })),

  update: accountProcedure
    .meta({ openapi: { method: 'PUT', path: '/chat-widgets/{configId}', tags: ['Chat Widget'], summary: 'Rename a chat widget or replace its settings' }, section: 'Chat Widget', access: 'write', bodyConstraints: AT_LEAST_ONE_FIELD, errorShapes: { '404': 'envelope' } })
    .input(ChatWidgetUpdateInput.extend(ConfigId.shape))
    .output(ChatWidgetData)
    .mutation(async ({ ctx, input }) => {
      const { configId, ...fields } = input;
      return { success: true as const, data: await updateWidget(ctx.em, ctx.account.id, configId, fields) };
    }),

  delete: accountProcedure
    .meta({ openapi: { method: 'DELETE', path: '/chat-widgets/{configId}', tags: ['Chat Widget'], summary: 'Delete a chat widget (its visitors stay as contacts)' }, section: 'Chat Widget', access: 'write', errorShapes: { '404': 'envelope' } })
    .input(ConfigId)
    .output(SuccessOnly)
    .mutation(async ({ ctx, input }) => {
      await deleteWidget(ctx.em, ctx.account.id, input.configId);
      return { success: true as const };
    }),

  otp: accountProcedure
    .meta({ openapi: { method: 'GET', path: '/chat-widgets/{configId}/otp', tags: ['Chat Widget'], summary: "The widget's current one-time code (RFC 6238, 30-second step)" }, section: 'Chat Widget', access: 'read', errorShapes: { '404': 'envelope' } })
    .input(ConfigId)
    .output(z.object({ success: z.literal(true), current_otp: z.string().regex(/^\d{6}$/), expires_in: z.number().int().min(0).max(30) }))
    .query(async ({ ctx, input }) => ({ success: true as const, ...(await currentWidgetOtp(ctx.em, ctx.services.secrets, ctx.account.id, input.configId)) })),

  identitySecret: accountProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/chat-widgets/{configId}/identity-secret',
        tags: ['Chat Widget'],
        summary: "A new secret for signing the widget's visitor identity tokens (shown once; replaces the previous one)",
        description:
          "The site's back end signs an HS256 JWT with this secret (its UTF-8 bytes are the HMAC key): `sub` the site's user id, optional `email` and `name`, `exp` at most 24 hours ahead. " +
          'The widget sends it as X-Visitor-Identity; `settings.identityVerification` (`optional` or `required`) makes the public endpoints check it. The secret is stored only encrypted and never returned again.',
      },
      section: 'Chat Widget',
      access: 'write',
      errorShapes: { '404': 'envelope' },
    })
    .input(ConfigId)
    .output(z.object({ success: z.literal(true), data: z.object({ identity_secret: z.string().regex(/^wis_/) }) }))
    .mutation(async ({ ctx, input }) => ({ success: true as const, data: await rotateIdentitySecret(ctx.em, ctx.services.secrets, ctx.account.id, input.configId) })),

  onConversationEvent: conversationEventsProcedure,
});
