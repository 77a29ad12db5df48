// POST /update-message-read-status: the visitor has seen the conversation, so every
// message sent to them (outbound) that is still unread becomes read, in one transaction
// with one Reads event for the call (when it changed something) and a `read` live event
// naming the messages, so the owner's inbox and other tabs learn it.
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Config } from '../config.ts';
import { queryRows, sql } from '../db/sql.ts';
import { NotFoundError } from '../errors.ts';
import { emit } from '../events/emit.ts';
import { publishConversationEvent } from '../realtime/publish-conversation-events.ts';
import type { ConversationQuery } from './list-conversation-messages.ts';
import type { VisitorRequest } from './visitor-identity.ts';
import { countVisitorWrite, findVisitorContact, type VisitorWriteDeps } from './visitor-conversation-write.ts';

export type ReadLimits = Pick<Config, 'WIDGET_REQUESTS_PER_IP_PER_MINUTE' | 'WIDGET_READS_PER_VISITOR_PER_MINUTE'>;
export type ReadDeps = VisitorWriteDeps & { em: EntityManager; limits: ReadLimits };

/** Returns the ids of the messages this call marked read (none when all were read already). */
export async function markConversationRead(
  { em, pool, secrets, limits }: ReadDeps,
  query: Omit<ConversationQuery, 'after'>,
  request: VisitorRequest,
): Promise<string[]> {
  const visitor = await countVisitorWrite({ pool, secrets, limits }, query, request, {
    statement: 'count-widget-read-receipt',
    bucket: 'widget-reads',
    limit: limits.WIDGET_READS_PER_VISITOR_PER_MINUTE,
  });
  return em.transactional(async (tx) => {
    const contact = await findVisitorContact(tx, query.widgetId, visitor, request);
    if (!contact?.id) throw new NotFoundError('Contact not found');

    // Row locks make a concurrent call skip what this one marks, so each message is announced once.
    const marked = await queryRows<{ id: string }>(
      tx,
      sql`update messages set read_at = now(), status = 'read'
        where account_id = ${contact.account_id} and contact_id = ${contact.id} and direction <> 'inbound' and read_at is null
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
      visitorId: visitor.key,
      contactId: contact.id,
      messageSids: messageIds,
    });
    return messageIds;
  });
}
