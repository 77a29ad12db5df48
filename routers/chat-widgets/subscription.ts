// Live chat-widget conversation events for internal apps over /trpc WebSockets: the
// account's messages, bot-typing changes and read receipts, as any process publishes them.
// Not a REST operation (no `openapi` meta).
import { z } from 'zod';
import { streamConversationEvents } from '../../server/realtime/stream-conversation-events.ts';
import { accountProcedure } from '../../server/trpc.ts';

export const ConversationEventsInput = z.object({ widgetId: z.string().min(1).max(200).optional() }).optional();

export const conversationEventsProcedure = accountProcedure
  .meta({ section: 'Chat Widget', access: 'read' })
  .input(ConversationEventsInput)
  .subscription(({ ctx, input, signal }) =>
    streamConversationEvents(ctx.services.conversationEvents, ctx.account.id, { widgetId: input?.widgetId }, signal),
  );
