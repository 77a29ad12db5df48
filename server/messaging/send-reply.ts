// POST /contacts/{contactId}/messages: the account's people and apps answer a contact on the
// contact's own channel. To a chat-widget visitor the reply is stored (direction
// `outbound-api`, in the open chat session) and pushed to the visitor's open sockets; the
// visitor's poll reads it too. To a WhatsApp contact it is a free-form session message
// through the provider, allowed only while the 24-hour window is open (409
// chat_window_closed otherwise: a template must reopen it), charged like a template send,
// all or nothing (messaging/charged-send.ts); the provider's statuses then move it on by its
// provider message id. Either way it is written by the one writer of messages, so it emits
// New Message, and the contact's next inbound message emits Replies. A reply is a person (or
// an app) taking the conversation: the bot stops for the contact. Its `sender` names the
// credential that wrote it (auth/credential-name.ts); `sender_name` is what the visitor sees.
import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { authorNameSql, type Author } from '../auth/credential-name.ts';
import { queryRows, sql } from '../db/sql.ts';
import { ConflictError, ForbiddenError, InvalidInputError, NotFoundError } from '../errors.ts';
import { HttpUrl } from '../input-rules.ts';
import { chargedProviderSend } from './charged-send.ts';
import { loadProviderCredentials } from './provider-credentials.ts';
import { publishConversationEvent } from '../realtime/publish-conversation-events.ts';
import type { Services } from '../process-services.ts';
import { conversationMessageOf } from '../widgets/conversation-message.ts';
import { WIDGET_CHANNEL } from '../widgets/find-or-create-visitor.ts';
import { recordMessage, type RecordedMessage } from '../messages/record-message.ts';

export const MAX_REPLY_LENGTH = 4096;
export const MAX_SENDER_NAME_LENGTH = 60;
export const SESSION_MESSAGE_CREDITS = 1;
export const WHATSAPP_CHANNEL = 'whatsapp';

export const ReplyInput = z.object({
  contactId: z.string(),
  text: z.string().min(1, 'must not be empty').max(MAX_REPLY_LENGTH, `must be at most ${MAX_REPLY_LENGTH} characters`),
  media_url: HttpUrl.max(2000).optional().describe('A file the reply carries, by URL; with media_content_type.'),
  media_content_type: z.string().min(1).max(200).optional().describe('The media type of media_url, such as image/png; with media_url.'),
  sender_name: z
    .string()
    .trim()
    .min(1, 'must not be empty')
    .max(MAX_SENDER_NAME_LENGTH, `must be at most ${MAX_SENDER_NAME_LENGTH} characters`)
    .optional()
    .describe("The name the visitor sees on the reply (a chat-widget conversation's `sender_name`), such as the agent's first name."),
});
/** sendReply's rule on the media pair, as the OpenAPI document states it (`bodyConstraints`). */
export const MEDIA_PAIR = { dependentRequired: { media_url: ['media_content_type'], media_content_type: ['media_url'] } };
export type ReplyInput = z.infer<typeof ReplyInput>;

export type Reply = { id: string; body: string; direction: 'outbound-api'; channel: string; status: string; timestamp: string };

type ContactRow = { phone_number: string | null; chat_widget_id: string | null; widget_visitor_id: string | null; window_open: boolean; sender: string };

function replyOf(recorded: RecordedMessage): Reply {
  const { message } = recorded;
  return { id: message.id, body: message.body, direction: 'outbound-api', channel: message.channel, status: message.status, timestamp: message.createdAt.toISOString() };
}

export async function sendReply(services: Services, accountId: string, input: ReplyInput, author: Author): Promise<Reply> {
  if ((input.media_url === undefined) !== (input.media_content_type === undefined)) {
    throw new InvalidInputError('media_url and media_content_type go together: send both or neither', { reason: 'media_pair' });
  }
  const media = input.media_url && input.media_content_type ? { url: input.media_url, contentType: input.media_content_type } : null;
  const em = services.orm.em.fork();
  const [contact] = await queryRows<ContactRow>(
    em,
    // The window is open until its end time even before the closing job runs.
    sql`select phone_number, chat_widget_id, widget_visitor_id,
          is_chat_window_open and coalesce(chat_window_expires_at > now(), true) as window_open,
          ${authorNameSql(author)} as sender
        from contacts where id = ${input.contactId} and account_id = ${accountId}`,
  );
  if (!contact) throw new NotFoundError('Contact not found');
  const message = {
    contactId: input.contactId,
    direction: 'outbound-api' as const,
    body: input.text,
    type: media?.contentType.startsWith('image/') ? 'image' : media ? 'document' : 'text',
    mediaUrl: media?.url ?? null,
    mediaContentType: media?.contentType ?? null,
    sender: contact.sender,
    senderName: input.sender_name ?? null,
    pausesBot: true,
  };

  if (contact.chat_widget_id && contact.widget_visitor_id) {
    const target = { accountId, widgetId: contact.chat_widget_id, visitorId: contact.widget_visitor_id, contactId: input.contactId };
    return em.transactional(async (tx) => {
      const recorded = await recordMessage(tx, accountId, { ...message, channel: WIDGET_CHANNEL });
      await publishConversationEvent(tx, { ...target, kind: 'message', message: conversationMessageOf(recorded.message) });
      return replyOf(recorded);
    });
  }

  const to = contact.phone_number;
  if (!to) {
    throw new InvalidInputError('The contact has neither a phone number nor a chat-widget conversation, so there is no channel to reply on', { reason: 'contact_without_channel' });
  }
  if (!contact.window_open) {
    throw new ConflictError("The contact's 24-hour WhatsApp window is closed; send an approved template instead (POST /whatsapp-templates/send)", {
      code: 'chat_window_closed',
    });
  }
  const credentials = await loadProviderCredentials(em, services.secrets, accountId);
  if (!credentials) throw new ForbiddenError('Connect a messaging provider account before sending WhatsApp messages');
  return chargedProviderSend(services, em, {
    accountId,
    credits: SESSION_MESSAGE_CREDITS,
    reason: 'session_message',
    send: () => services.messaging.sendSessionMessage(credentials, { to, text: input.text, media }),
    record: async (tx: EntityManager, providerMessageId) =>
      replyOf(await recordMessage(tx, accountId, { ...message, channel: WHATSAPP_CHANNEL, status: 'sent', providerMessageId })),
    about: { contactId: input.contactId },
    failed: 'session message send failed',
  });
}
