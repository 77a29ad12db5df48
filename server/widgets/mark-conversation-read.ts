// POST /update-message-read-status: the visitor has seen the conversation, so every
// message sent to them (outbound) that is still unread becomes read, in one transaction
// with one Reads event for the call (when it changed something) and a `read` live event
// naming the messages, so the owner's inbox and other tabs learn it.
import type { EntityManager } from '@mikro-orm/postgresql';
import { queryRows, sql } from '../db/sql.ts';
import { NotFoundError } from '../errors.ts';
import { emit } from '../events/emit.ts';
import { publishConversationEvent } from '../realtime/conversation-events.ts';
import { refuseForeignOrigin, type RequestOrigin } from './check-widget-origin.ts';
import type { ConversationQuery } from './list-conversation-messages.ts';
import { readSettings } from './widget-settings.ts';

type ContactRow = {
  id: string;
  account_id: string;
  phone_number: string | null;
  email: string | null;
  first_name: string;
  last_name: string;
  settings: unknown;
};

/** Returns the ids of the messages this call marked read (none when all were read already). */
export async function markConversationRead(em: EntityManager, query: Omit<ConversationQuery, 'after'>, request: RequestOrigin): Promise<string[]> {
  return em.transactional(async (tx) => {
    const [contact] = await queryRows<ContactRow>(
      tx,
      sql`select c.id, c.account_id, c.phone_number, c.email, c.first_name, c.last_name, w.settings
         from contacts c join chat_widgets w on w.id = c.chat_widget_id
        where c.chat_widget_id = ${query.widgetId} and c.widget_visitor_id = ${query.visitorId}`,
    );
    if (!contact) throw new NotFoundError('Contact not found');
    refuseForeignOrigin(request, readSettings(contact.settings));

    // Row locks make a concurrent call skip what this one marks, so each message is announced once.
    const marked = await queryRows<{ id: string }>(
      tx,
      sql`update messages set read_at = now(), status = 'read'
        where contact_id = ${contact.id} and direction <> 'inbound' and read_at is null
        returning id`,
    );
    if (!marked.length) return [];
    const messageIds = marked.map((row) => row.id).sort();
    await emit(tx, contact.account_id, 'Reads', {
      contact: { id: contact.id, phone_number: contact.phone_number, email: contact.email, first_name: contact.first_name, last_name: contact.last_name },
      message_ids: messageIds,
      status: 'read',
      channel: 'chat_widget',
    });
    await publishConversationEvent(tx, {
      kind: 'read',
      accountId: contact.account_id,
      widgetId: query.widgetId,
      visitorId: query.visitorId,
      contactId: contact.id,
      messageSids: messageIds,
    });
    return messageIds;
  });
}
