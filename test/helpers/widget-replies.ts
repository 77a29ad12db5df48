// Replies to a chat-widget visitor written as the account's side writes them: the message
// through the domain's writer and its live event, in one transaction.
import { recordMessage } from '../../server/messages/record-message.ts';
import { publishConversationEvent } from '../../server/realtime/publish-conversation-events.ts';
import { conversationMessageOf } from '../../server/widgets/conversation-message.ts';
import { WIDGET_CHANNEL } from '../../server/widgets/find-or-create-visitor.ts';
import type { TestService } from './service.ts';

export type WidgetVisitor = { accountId: string; widgetId: string; visitorId: string };

/** The visitor's contact id (the visitor has written, so it exists). */
export async function visitorContactId(service: TestService, visitor: WidgetVisitor): Promise<string> {
  const { rows } = await service.services.pool.query<{ id: string }>(
    'select id from contacts where account_id = $1 and chat_widget_id = $2 and widget_visitor_id = $3',
    [visitor.accountId, visitor.widgetId, visitor.visitorId],
  );
  if (rows.length !== 1) throw new Error(`expected one contact for the visitor, found ${rows.length}`);
  return rows[0]!.id;
}

/** A person's reply (with the name it shows the visitor, when given), stored and pushed to the visitor's sockets. */
export async function storeWidgetReply(service: TestService, visitor: WidgetVisitor, body: string, options: { senderName?: string } = {}): Promise<void> {
  const contactId = await visitorContactId(service, visitor);
  await service.services.orm.em.fork().transactional(async (em) => {
    const recorded = await recordMessage(em, visitor.accountId, {
      contactId,
      direction: 'outbound',
      body,
      channel: WIDGET_CHANNEL,
      sender: 'agent',
      senderName: options.senderName ?? null,
    });
    await em.flush();
    const message = conversationMessageOf(recorded.message);
    await publishConversationEvent(em, { kind: 'message', accountId: visitor.accountId, widgetId: visitor.widgetId, visitorId: visitor.visitorId, contactId, message });
  });
}
