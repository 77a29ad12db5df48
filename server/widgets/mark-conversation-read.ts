// POST /update-message-read-status: the visitor has seen the conversation, so every
// message sent to them (outbound) that is still unread becomes read, in one transaction
// with one Reads event for the call (when it changed something) and a `read` live event
// naming the messages, so the owner's inbox and other tabs learn it.
import type { EntityManager } from '@mikro-orm/postgresql';
import type pg from 'pg';
import type { Config } from '../config.ts';
import { queryRows, sql } from '../db/sql.ts';
import { NotFoundError } from '../errors.ts';
import { emit } from '../events/emit.ts';
import { publishConversationEvent } from '../realtime/conversation-events.ts';
import type { Secrets } from '../secrets.ts';
import { refuseForeignOrigin } from './check-widget-origin.ts';
import { addressBucket, countVisitorRequest, countingRefusals } from './count-visitor-requests.ts';
import type { ConversationQuery } from './list-conversation-messages.ts';
import { checkWidgetVisitor, visitorBeforeStatement, type VisitorRequest } from './visitor-identity.ts';
import { readSettings } from './widget-settings.ts';

export type ReadLimits = Pick<Config, 'WIDGET_REQUESTS_PER_IP_PER_MINUTE' | 'WIDGET_READS_PER_VISITOR_PER_MINUTE'>;
export type ReadDeps = { em: EntityManager; pool: pg.Pool; secrets: Secrets; limits: ReadLimits };

type ContactRow = {
  id: string | null;
  account_id: string;
  phone_number: string | null;
  email: string | null;
  first_name: string;
  last_name: string;
  settings: unknown;
};

/** Returns the ids of the messages this call marked read (none when all were read already). */
export async function markConversationRead(
  { em, pool, secrets, limits }: ReadDeps,
  query: Omit<ConversationQuery, 'after'>,
  request: VisitorRequest,
): Promise<string[]> {
  const visitor = await countingRefusals(pool, request.address, limits.WIDGET_REQUESTS_PER_IP_PER_MINUTE, () =>
    visitorBeforeStatement(pool, secrets, query.widgetId, query.visitorId, request.identityToken),
  );
  // Counted before the transaction, which a refusal would otherwise roll the count back with.
  await countVisitorRequest(pool, 'count-widget-read-receipt', [
    addressBucket(request.address, limits.WIDGET_REQUESTS_PER_IP_PER_MINUTE),
    { key: `widget-reads:${query.widgetId}:${visitor.key}`, limit: limits.WIDGET_READS_PER_VISITOR_PER_MINUTE },
  ]);
  return em.transactional(async (tx) => {
    const [contact] = await queryRows<ContactRow>(
      tx,
      sql`select c.id, w.account_id, c.phone_number, c.email, c.first_name, c.last_name, w.settings
         from chat_widgets w left join contacts c on c.chat_widget_id = w.id and c.widget_visitor_id = ${visitor.key}
        where w.id = ${query.widgetId}`,
    );
    if (!contact) throw new NotFoundError('Contact not found');
    refuseForeignOrigin(request, readSettings(contact.settings));
    checkWidgetVisitor(contact.settings, visitor);
    if (!contact.id) throw new NotFoundError('Contact not found');

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
      visitorId: visitor.key,
      contactId: contact.id,
      messageSids: messageIds,
    });
    return messageIds;
  });
}
