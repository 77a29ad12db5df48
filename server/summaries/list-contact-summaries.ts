// GET /contacts/{contactId}/summaries: the contact's conversation summaries, newest first.
import type { EntityManager } from '@mikro-orm/postgresql';
import { Summary } from '../db/entities/index.ts';
import { requireContact } from '../contacts/find-contact.ts';
import { toSummaryRecord, type SummaryRecord } from './summary-record.ts';

export async function listContactSummaries(em: EntityManager, accountId: string, contactId: string): Promise<SummaryRecord[]> {
  const contact = await requireContact(em, accountId, contactId);
  const summaries = await em.find(
    Summary,
    { account: accountId, contact: contact.id, kind: 'conversation' },
    { orderBy: { createdAt: 'desc', id: 'desc' } },
  );
  return summaries.map(toSummaryRecord);
}
