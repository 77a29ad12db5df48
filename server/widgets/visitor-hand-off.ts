// POST /chat-widget-handoff: the widget page's "talk to a person" action. Public like the
// other widget endpoints (allowed origins, the identity token, per-address and per-visitor
// limits); the visitor's conversation is handed to a person (hand-off-conversation.ts).
// A visitor who has not written yet has no conversation to hand over: 404.
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Config } from '../config.ts';
import { NotFoundError } from '../errors.ts';
import { handOffConversation } from './hand-off-conversation.ts';
import type { ConversationQuery } from './list-conversation-messages.ts';
import type { VisitorRequest } from './visitor-identity.ts';
import { countVisitorWrite, findVisitorContact, type VisitorWriteDeps } from './visitor-conversation-write.ts';

export const VISITOR_HANDOFF_REASON = 'The visitor asked to talk to a person';

/** The address's budget, and the hand-offs one visitor may ask for per minute (one alerts; the rest change nothing). */
export type HandOffLimits = Pick<Config, 'WIDGET_REQUESTS_PER_IP_PER_MINUTE' | 'WIDGET_HANDOFFS_PER_VISITOR_PER_MINUTE'>;
export type HandOffDeps = VisitorWriteDeps & { em: EntityManager; limits: HandOffLimits };

export async function handOffVisitor({ em, pool, secrets, limits }: HandOffDeps, query: Omit<ConversationQuery, 'after'>, request: VisitorRequest): Promise<void> {
  const visitor = await countVisitorWrite({ pool, secrets, limits }, query, request, {
    statement: 'count-widget-handoff',
    bucket: 'widget-handoffs',
    limit: limits.WIDGET_HANDOFFS_PER_VISITOR_PER_MINUTE,
  });
  await em.transactional(async (tx) => {
    const contact = await findVisitorContact(tx, query.widgetId, visitor, request);
    if (!contact) throw new NotFoundError('Chat widget not found');
    if (!contact.id) throw new NotFoundError('Contact not found');
    await handOffConversation(tx, contact.account_id, contact.id, { reason: VISITOR_HANDOFF_REASON, source: 'visitor' });
  });
}
