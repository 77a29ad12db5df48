// The `generate-summary` job's work: summarize the contact's conversation,
// store it, and announce it (Chat Concluded, kind `conversation_summary`) in
// the same transaction as the stored row.
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';
import { Contact, Message, Summary } from '../db/entities/index.ts';
import { newId } from '../db/ids.ts';
import { emit } from '../events/emit.ts';
import { contactEventBlock, contactTagIds } from '../messages/contact-event-data.ts';
import { SummaryRejectedError } from './chat-completions-summarizer.ts';
import type { Summarizer } from './summarizer.ts';
import { toSummaryRecord } from './summary-record.ts';

/** The newest messages a summary reads; message_count still counts them all. */
const MAX_SUMMARIZED_MESSAGES = 500;

export type SummaryOutcome =
  | { stored: true; summaryId: string }
  | { stored: false; reason: 'contact_not_found' | 'provider_rejected' };

/**
 * Throws when the summarizer fails transiently (5xx, network, time-out) so the
 * job is retried; a provider's 4xx refusal is logged and stores nothing.
 */
export async function generateConversationSummary(
  em: EntityManager,
  deps: { summarize: Summarizer; log: Logger; signal?: AbortSignal },
  accountId: string,
  contactId: string,
): Promise<SummaryOutcome> {
  const contact = await em.findOne(Contact, { id: contactId, account: accountId });
  if (!contact) {
    deps.log.info({ accountId, contactId }, 'summary skipped: the contact no longer exists');
    return { stored: false, reason: 'contact_not_found' };
  }
  const where = { account: accountId, contact: contact.id };
  const messageCount = await em.count(Message, where);
  const newest = await em.find(Message, where, { orderBy: { createdAt: 'desc', id: 'desc' }, limit: MAX_SUMMARIZED_MESSAGES });

  let text: string;
  try {
    text = await deps.summarize(newest.reverse(), deps.signal);
  } catch (error) {
    if (!(error instanceof SummaryRejectedError)) throw error;
    // The provider's refusal, not a fault of the service: a warning, without a stack.
    deps.log.warn({ accountId, contactId, status: error.status, failure: error.message }, 'summary provider refused the request; no summary stored');
    return { stored: false, reason: 'provider_rejected' };
  }

  return em.transactional(async (tx) => {
    const summary = tx.create(Summary, {
      id: newId('sum'),
      account: accountId,
      contact: contact.id,
      kind: 'conversation',
      summary: text,
      messageCount,
      day: null,
      createdAt: new Date(),
    });
    tx.persist(summary);
    await emit(tx, accountId, 'Chat Concluded', {
      kind: 'conversation_summary',
      contact: contactEventBlock(contact),
      summary: toSummaryRecord(summary),
      tags: await contactTagIds(tx, accountId, contact.id),
    });
    return { stored: true as const, summaryId: summary.id };
  });
}
