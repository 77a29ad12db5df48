// POST /chat-widget-handoff: the widget page's "talk to a person" action. Public like the
// other widget endpoints (allowed origins, the identity token, per-address and per-visitor
// limits); the visitor's conversation is handed to a person (server/contacts/hand-off.ts).
// A visitor who has not written yet has no conversation to hand over: 404.
import type { EntityManager } from '@mikro-orm/postgresql';
import type pg from 'pg';
import type { Config } from '../config.ts';
import { handOff } from '../contacts/hand-off.ts';
import { queryRows, sql } from '../db/sql.ts';
import { NotFoundError } from '../errors.ts';
import type { Secrets } from '../secrets.ts';
import { refuseForeignOrigin } from './check-widget-origin.ts';
import { addressBucket, countingRefusals, countVisitorRequest } from './count-visitor-requests.ts';
import type { ConversationQuery } from './list-conversation-messages.ts';
import { checkWidgetVisitor, visitorBeforeStatement, type VisitorRequest } from './visitor-identity.ts';
import { readSettings } from './widget-settings.ts';

/** Hand-off requests one visitor may make per minute (one alerts; the rest change nothing). */
export const VISITOR_HANDOFFS_PER_MINUTE = 10;
export const VISITOR_HANDOFF_REASON = 'The visitor asked to talk to a person';

export type HandOffDeps = { em: EntityManager; pool: pg.Pool; secrets: Secrets; limits: Pick<Config, 'WIDGET_REQUESTS_PER_IP_PER_MINUTE'> };

export async function handOffVisitor({ em, pool, secrets, limits }: HandOffDeps, query: Omit<ConversationQuery, 'after'>, request: VisitorRequest): Promise<void> {
  const visitor = await countingRefusals(pool, request.address, limits.WIDGET_REQUESTS_PER_IP_PER_MINUTE, () =>
    visitorBeforeStatement(pool, secrets, query.widgetId, query.visitorId, request.identityToken),
  );
  // Counted before the transaction, which a refusal would otherwise roll the count back with.
  await countVisitorRequest(pool, 'count-widget-handoff', [
    addressBucket(request.address, limits.WIDGET_REQUESTS_PER_IP_PER_MINUTE),
    { key: `widget-handoffs:${query.widgetId}:${visitor.key}`, limit: VISITOR_HANDOFFS_PER_MINUTE },
  ]);
  await em.transactional(async (tx) => {
    const [found] = await queryRows<{ contact_id: string | null; account_id: string; settings: unknown }>(
      tx,
      sql`select c.id as contact_id, w.account_id, w.settings
         from chat_widgets w left join contacts c on c.chat_widget_id = w.id and c.widget_visitor_id = ${visitor.key}
        where w.id = ${query.widgetId}`,
    );
    if (!found) throw new NotFoundError('Chat widget not found');
    refuseForeignOrigin(request, readSettings(found.settings));
    checkWidgetVisitor(found.settings, visitor);
    if (!found.contact_id) throw new NotFoundError('Contact not found');
    await handOff(tx, found.account_id, found.contact_id, { reason: VISITOR_HANDOFF_REASON, source: 'visitor' });
  });
}
