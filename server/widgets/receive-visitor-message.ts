// POST /incoming-chat-widget-message: a visitor's message, in ONE transaction: the
// visitor's contact (created on the first message), the stored message (New Message, and
// Replies when it answers the bot), the bot-typing flag, the live events for open widget
// pages, and the job that takes the bot's turn (workers/chat-widget-message.ts). The job is
// keyed by the message id, which is the `messageId` answered: one id names both.
import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { InvalidInputError, MissingParametersError, NotFoundError } from '../errors.ts';
import { enqueueJob } from '../jobs.ts';
import { recordMessage } from '../messages/record-message.ts';
import { publishConversationEvents } from '../realtime/conversation-events.ts';
import { refuseForeignOrigin, type RequestOrigin } from './check-widget-origin.ts';
import { conversationMessageOf } from './conversation-message.ts';
import { countVisitorMessage } from './count-visitor-messages.ts';
import { findOrCreateVisitorContact, WIDGET_CHANNEL } from './find-or-create-visitor.ts';
import { MAX_WIDGET_ID_LENGTH } from './widget-record.ts';
import { readSettings } from './widget-settings.ts';

export const CHAT_WIDGET_MESSAGE_TASK = 'chat_widget_message';
/** Longest visitor message text. */
export const MAX_VISITOR_MESSAGE_LENGTH = 4000;

/** Visitor ids are what the widget page keeps in the browser. */
export const VisitorId = z.string().regex(/^[A-Za-z0-9_-]{1,128}$/, 'must be 1 to 128 letters, digits, - or _');
export const WidgetId = z.string().min(1, 'must not be empty').max(MAX_WIDGET_ID_LENGTH, `must be at most ${MAX_WIDGET_ID_LENGTH} characters`);

export const VisitorMessageInput = z.object({
  customData: z.object({
    body: z
      .string()
      .max(MAX_VISITOR_MESSAGE_LENGTH, `must be at most ${MAX_VISITOR_MESSAGE_LENGTH} characters`)
      .refine((text) => text.trim() !== '', 'must not be empty'),
    fromId: VisitorId.describe('The visitor id.'),
    toId: WidgetId.describe('The widget id (configId).'),
    messageSid: z.string().max(200).optional().describe("The widget's id for the message; stored as its external id."),
    id: z.string().max(200).optional().describe('Alternative identifier, used when messageSid is absent.'),
    status: z.string().max(40).optional().describe('Default `received`.'),
    mediaUrl: z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' }).max(2000).nullable().optional(),
    mediaContentType: z.string().max(200).nullable().optional(),
  }),
  messageType: z.string().max(40).default('text').describe('text, reaction, ...'),
  /** The owner's account id; normally the `userId` query parameter. */
  userId: z.string().max(200).optional().describe("Required: the widget owner's account id (the configuration's `userId`)."),
});
export type VisitorMessageInput = z.infer<typeof VisitorMessageInput>;

export type BotTurnJob = {
  accountId: string;
  widgetId: string;
  contactId: string;
  visitorId: string;
  messageId: string;
  /** The message opened a new chat session: the bot greets. */
  firstOfSession: boolean;
};

export async function receiveVisitorMessage(
  em: EntityManager,
  ownerId: string | undefined,
  input: VisitorMessageInput,
  request: RequestOrigin,
): Promise<{ messageId: string }> {
  if (!ownerId) throw new MissingParametersError('userId is required');
  const { customData } = input;
  const widgetId = customData.toId;
  const visitorId = customData.fromId;

  const [widget] = await em.execute<{ settings: unknown }[]>('select settings from chat_widgets where id = ? and account_id = ?', [widgetId, ownerId]);
  if (!widget) throw new NotFoundError('Chat widget not found');
  refuseForeignOrigin(request, readSettings(widget.settings));
  if (customData.mediaContentType && !customData.mediaUrl) {
    throw new InvalidInputError('customData.mediaUrl is required with mediaContentType', { details: [{ path: 'customData.mediaUrl', message: 'is required with mediaContentType' }] });
  }
  // Counted before the transaction: a refused message costs one statement, not a transaction.
  await countVisitorMessage(em, widgetId, visitorId);

  return em.transactional(async (tx) => {
    const { contactId } = await findOrCreateVisitorContact(tx, ownerId, widgetId, visitorId);
    const recorded = await recordMessage(tx, ownerId, {
      contactId,
      direction: 'inbound',
      body: customData.body,
      type: customData.mediaContentType?.startsWith('image/') ? 'image' : 'text',
      channel: WIDGET_CHANNEL,
      status: customData.status ?? 'received',
      sender: 'contact',
      mediaUrl: customData.mediaUrl ?? null,
      mediaContentType: customData.mediaContentType ?? null,
      externalId: customData.messageSid ?? customData.id ?? null,
    });
    const target = { accountId: ownerId, widgetId, visitorId, contactId };
    // The bot types only while it is active for the contact (not after a human took over);
    // the job runs either way and decides the turn.
    const [typing] = await tx.execute<{ is_bot_typing: boolean }[]>(
      'update contacts set is_bot_typing = is_bot_active where id = ? returning is_bot_typing',
      [contactId],
    );
    // The message and the typing flag in one round trip (this is the push's latency).
    await publishConversationEvents(tx, [
      { ...target, kind: 'message', message: conversationMessageOf(recorded.message) },
      ...(typing!.is_bot_typing ? [{ ...target, kind: 'typing' as const, isBotTyping: true }] : []),
    ]);
    const job: BotTurnJob = { ...target, messageId: recorded.messageId, firstOfSession: recorded.sessionOpened };
    await enqueueJob(tx, CHAT_WIDGET_MESSAGE_TASK, job, { jobKey: `${CHAT_WIDGET_MESSAGE_TASK}:${recorded.messageId}` });
    return { messageId: recorded.messageId };
  });
}
