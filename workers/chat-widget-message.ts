// Task `chat_widget_message` (queued with a chat-widget visitor message that names a hand-off
// keyword, keyed by its id; before the greeting and the away message were written with the
// visitor's message, with those messages too): the bot's turn
// (server/widgets/take-bot-turn.ts). A thrown error lets Graphile Worker retry; the turn is
// idempotent.
import type { Task } from 'graphile-worker';
import { z } from 'zod';
import type { Services } from '../server/process-services.ts';
import { takeBotTurn } from '../server/widgets/take-bot-turn.ts';

export { CHAT_WIDGET_MESSAGE_TASK } from '../server/widgets/receive-visitor-message.ts';

const Payload = z.object({
  accountId: z.string().min(1),
  widgetId: z.string().min(1),
  contactId: z.string().min(1),
  messageId: z.string().min(1),
  firstOfSession: z.boolean(),
});

export function chatWidgetMessageTask(services: Services): Task {
  return async (payload) => {
    await takeBotTurn(services.orm.em.fork(), Payload.parse(payload), services.conversationEvents);
  };
}
