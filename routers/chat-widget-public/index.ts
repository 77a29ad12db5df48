// The chat widget's public endpoints (spec "Chat widget" table): what the widget page in a
// visitor's browser calls. No API key (Authentication rule 9); each names its widget, whose
// allowed origins and abuse limits apply instead. Failure bodies are the spec's own shapes
// for these endpoints, not the envelope.
import { z, ZodError } from 'zod';
import { ApiError, describeZodError, INTERNAL_ERROR_MESSAGE, InvalidInputError } from '../../server/errors.ts';
import type { Services } from '../../server/process-services.ts';
import type { RequestInfo } from '../../server/trpc.ts';
import { publicProcedure, router } from '../../server/trpc.ts';
import { ConversationMessage } from '../../server/widgets/conversation-message.ts';
import { listConversationMessages, type ConversationQuery } from '../../server/widgets/list-conversation-messages.ts';
import { handOffVisitor, type HandOffDeps } from '../../server/widgets/visitor-hand-off.ts';
import { markConversationRead, type ReadDeps } from '../../server/widgets/mark-conversation-read.ts';
import { PublicWidgetConfig, readPublicWidgetConfig } from '../../server/widgets/read-public-widget-config.ts';
import { receiveVisitorMessage, VisitorId, VisitorMessageInput, WidgetId } from '../../server/widgets/receive-visitor-message.ts';
import { identityTokenOf, VISITOR_IDENTITY_HEADER, type VisitorRequest } from '../../server/widgets/visitor-identity.ts';

/** The request as the widget domain sees it. */
function visitorRequestOf({ request }: { request: RequestInfo }): VisitorRequest {
  const origin = request.headers.origin;
  return {
    origin: typeof origin === 'string' ? origin : undefined,
    host: request.host,
    // fastify's request.ip: X-Forwarded-For only from TRUST_PROXY addresses.
    address: request.ip,
    identityToken: identityTokenOf(request.headers[VISITOR_IDENTITY_HEADER]),
    userAgent: request.headers['user-agent'],
  };
}

const LIMITS_NOTE =
  ' Every public widget call counts against the client address (WIDGET_REQUESTS_PER_IP_PER_MINUTE, 429 with Retry-After).' +
  ' With `settings.identityVerification` `required`, a call without a valid X-Visitor-Identity token answers 401; an invalid token is 401 with `optional` too.';

/** The incoming message's 400 says which field failed as `details` too (spec: 400 `{error, details}`). */
const detailedInputErrors = publicProcedure.use(async ({ next, getRawInput }) => {
  const result = await next();
  if (result.ok) return result;
  const cause = result.error.cause;
  if (cause instanceof ZodError) {
    const details = cause.issues.map((issue) => ({ path: issue.path.join('.') || 'body', message: issue.message }));
    throw new InvalidInputError(describeZodError(cause, await getRawInput()), { details });
  }
  return result;
});

/** Unexpected failures of the polling and read endpoints: 500 `{error, details}`, with details only in development. */
const developmentDetails = publicProcedure.use(async ({ ctx, next }) => {
  const result = await next();
  if (result.ok) return result;
  const cause = result.error.cause ?? result.error;
  if (cause instanceof ApiError || cause instanceof ZodError || result.error.code === 'BAD_REQUEST') return result;
  const details = ctx.services.config.NODE_ENV === 'development' && cause instanceof Error ? cause.message : undefined;
  throw new ApiError(500, INTERNAL_ERROR_MESSAGE, { reason: 'internal', details, cause });
});

const ConversationInput = z.object({
  fromId: VisitorId.describe('The visitor id.'),
  toId: WidgetId.describe('The widget id (configId).'),
});

const Milliseconds = z.string().regex(/^\d{1,15}$/, 'must be a time in milliseconds since 1970 (digits only)');

/** Read receipts and the hand-off: the visitor's conversation changed by `change`, on a fresh EntityManager. */
function changeConversation(change: (deps: ReadDeps & HandOffDeps, query: Omit<ConversationQuery, 'after'>, request: VisitorRequest) => Promise<unknown>) {
  return async ({ ctx, input }: { ctx: { request: RequestInfo; services: Services }; input: z.infer<typeof ConversationInput> }) => {
    const { services } = ctx;
    await change(
      { em: services.orm.em.fork(), pool: services.pool, secrets: services.secrets, limits: services.config },
      { widgetId: input.toId, visitorId: input.fromId },
      visitorRequestOf(ctx),
    );
    return { success: true as const };
  };
}

const PublicConfigOutput = z.object({ success: z.literal(true), data: PublicWidgetConfig });

export const chatWidgetPublicRouter = router({
  config: publicProcedure
    .meta({
      openapi: { method: 'GET', path: '/chat-widget-config', tags: ['Chat Widget'], summary: "A chat widget's public configuration (no credentials)", description: LIMITS_NOTE.trim(), protect: false },
      section: 'Chat Widget',
      access: 'read',
      errorShapes: { default: 'successError', '401': 'error', '403': 'successError', '404': 'successError', '429': 'envelope' },
    })
    .input(z.object({ configId: z.string().min(1, 'must not be empty') }))
    .output(PublicConfigOutput)
    .query(async ({ ctx, input }) => ({
      success: true as const,
      data: await readPublicWidgetConfig(
        { pool: ctx.services.pool, secrets: ctx.services.secrets, limits: ctx.services.config },
        input.configId,
        visitorRequestOf(ctx),
      ),
    })),

  incomingMessage: detailedInputErrors
    .meta({
      openapi: {
        method: 'POST',
        path: '/incoming-chat-widget-message',
        tags: ['Chat Widget'],
        summary: "A visitor's message from the chat widget (no credentials; `userId` names the widget's owner)",
        description:
          'Stores the message on the visitor\'s contact (created with the first message), with the bot\'s answer when the widget\'s settings decide it (the greeting for a chat session\'s first message, the away message for a later one), or queues the bot\'s turn for a message naming a hand-off keyword; `messageId` is the stored message\'s id, which also keys a queued job. ' +
          'Limits: WIDGET_MESSAGES_PER_VISITOR_PER_MINUTE messages per visitor and WIDGET_MESSAGES_PER_WIDGET_PER_MINUTE per widget; per client address and widget, WIDGET_MESSAGES_PER_IP_PER_MINUTE messages and WIDGET_NEW_VISITORS_PER_IP_PER_MINUTE new visitor ids (429 with Retry-After); body text up to 4,000 characters.' +
          LIMITS_NOTE +
          ' A verified visitor is one contact and one conversation whatever `fromId` each device sends.',
        protect: false,
      },
      section: 'Chat Widget',
      access: 'write',
      queryFields: ['userId'],
      requiredFields: ['userId'],
      errorShapes: { default: 'error', '400': 'errorDetails', '401': 'error', '403': 'error', '404': 'error', '405': 'error', '429': 'error' },
    })
    .input(VisitorMessageInput)
    .output(z.object({ success: z.literal(true), messageId: z.string() }))
    .mutation(async ({ ctx, input }) => {
      const ownerId = input.userId ?? ctx.request.query.get('userId') ?? undefined;
      const received = await receiveVisitorMessage(
        { pool: ctx.services.pool, secrets: ctx.services.secrets, limits: ctx.services.config },
        ownerId || undefined,
        input,
        visitorRequestOf(ctx),
      );
      return { success: true as const, messageId: received.messageId };
    }),

  messages: developmentDetails
    .meta({
      openapi: {
        method: 'GET',
        path: '/chat-widget-messages',
        tags: ['Chat Widget'],
        summary: "A visitor's conversation with a widget, oldest first (no credentials)",
        description:
          'All chat sessions, at most 200 messages per answer: the oldest ones after `after`; ask again with the last timestamp for more. ' +
          'With `before`, the newest ones before that time instead (still oldest first): a widget opens at its latest messages with a `before` later than any of them and loads earlier ones with the first timestamp it holds. ' +
          'Limit: WIDGET_POLLS_PER_VISITOR_PER_MINUTE polls per visitor.' +
          LIMITS_NOTE,
        protect: false,
      },
      section: 'Chat Widget',
      access: 'read',
      errorShapes: { default: 'error', '401': 'error', '403': 'error', '404': 'error', '429': 'envelope', '500': 'errorDetails' },
    })
    .input(
      ConversationInput.extend({
        after: Milliseconds.optional().describe('Only messages strictly after this time, in milliseconds since 1970.'),
        before: Milliseconds.optional().describe(
          'Only messages strictly before this time, in milliseconds since 1970: the newest 200 of them (for paging backwards; the answer stays oldest first).',
        ),
      }),
    )
    .output(z.object({ messages: z.array(ConversationMessage), isBotTyping: z.boolean() }))
    .query(({ ctx, input }) =>
      listConversationMessages(
        { pool: ctx.services.pool, secrets: ctx.services.secrets, limits: ctx.services.config },
        {
          widgetId: input.toId,
          visitorId: input.fromId,
          after: input.after === undefined ? undefined : Number(input.after),
          before: input.before === undefined ? undefined : Number(input.before),
        },
        visitorRequestOf(ctx),
      ),
    ),

  markRead: developmentDetails
    .meta({
      openapi: {
        method: 'POST',
        path: '/update-message-read-status',
        tags: ['Chat Widget'],
        summary: "Mark the messages sent to a visitor read (no credentials)",
        description:
          'Every unread outbound message of the conversation becomes `read`; one Reads event per call that changed something. ' +
          'Limit: WIDGET_READS_PER_VISITOR_PER_MINUTE calls per visitor.' +
          LIMITS_NOTE,
        protect: false,
      },
      section: 'Chat Widget',
      access: 'write',
      errorShapes: { default: 'error', '401': 'error', '403': 'error', '404': 'error', '429': 'envelope', '500': 'errorDetails' },
    })
    .input(ConversationInput)
    .output(z.object({ success: z.literal(true) }))
    .mutation(changeConversation(markConversationRead)),

  handoff: developmentDetails
    .meta({
      openapi: {
        method: 'POST',
        path: '/chat-widget-handoff',
        tags: ['Chat Widget'],
        summary: 'The visitor asks to talk to a person (no credentials)',
        description:
          "The bot stops for the visitor, the account is alerted (Human Alerted, once per chat session) and the visitor is told a person will answer (the widget's handoffMessage). " +
          '404 when the visitor has not written yet. Limit: WIDGET_HANDOFFS_PER_VISITOR_PER_MINUTE calls per visitor.' +
          LIMITS_NOTE,
        protect: false,
      },
      section: 'Chat Widget',
      access: 'write',
      errorShapes: { default: 'error', '401': 'error', '403': 'error', '404': 'error', '429': 'envelope', '500': 'errorDetails' },
    })
    .input(ConversationInput)
    .output(z.object({ success: z.literal(true) }))
    .mutation(changeConversation(handOffVisitor)),
});
