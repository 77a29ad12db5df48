// A broadcast recipient's outcome and the broadcast's counters change in one statement,
// so the counters always equal the counts of the recipients' outcomes. Only a claimed
// recipient changes: an outcome is recorded once.
import type { EntityManager } from '@mikro-orm/postgresql';
import { queryRows, sql } from '../db/sql.ts';

export type RecipientOutcome = {
  contactId: string;
  status: 'sent' | 'failed' | 'skipped';
  messageId?: string | null;
  providerMessageId?: string | null;
  error?: string | null;
};

const recordOutcomes = (accountId: string, broadcastId: string, outcomes: string) => sql`
with outcome as (
  select * from json_to_recordset(${outcomes}::json)
    as o(contact_id text, status text, message_id text, provider_message_id text, error text)
), changed as (
  update broadcast_recipients r
     set status = o.status, message_id = o.message_id, provider_message_id = o.provider_message_id,
         error = o.error, finished_at = now()
    from outcome o
   where r.account_id = ${accountId} and r.broadcast_id = ${broadcastId} and r.contact_id = o.contact_id and r.status = 'claimed'
  returning r.status
)
update broadcasts
   set sent = sent + (select count(*) from changed where status = 'sent'),
       failed = failed + (select count(*) from changed where status = 'failed'),
       skipped = skipped + (select count(*) from changed where status = 'skipped'),
       updated_at = now()
 where account_id = ${accountId} and id = ${broadcastId}
returning (select count(*) from changed)::int as changed`;

/** Returns how many recipients changed (claimed ones only). */
export async function recordRecipientOutcomes(em: EntityManager, accountId: string, broadcastId: string, outcomes: RecipientOutcome[]): Promise<number> {
  if (outcomes.length === 0) return 0;
  const json = JSON.stringify(
    outcomes.map((outcome) => ({
      contact_id: outcome.contactId,
      status: outcome.status,
      message_id: outcome.messageId ?? null,
      provider_message_id: outcome.providerMessageId ?? null,
      error: outcome.error ?? null,
    })),
  );
  const rows = await queryRows<{ changed: number }>(em, recordOutcomes(accountId, broadcastId, json));
  return rows[0]?.changed ?? 0;
}

/** Called inside the send's own transaction, so the message and the outcome commit together. */
export async function recordBroadcastSend(tx: EntityManager, accountId: string, broadcastId: string, contactId: string, messageId: string, providerMessageId: string): Promise<void> {
  await recordRecipientOutcomes(tx, accountId, broadcastId, [{ contactId, status: 'sent', messageId, providerMessageId }]);
}

export const INTERRUPTED_ERROR = 'interrupted; not retried to avoid a duplicate message';

const failUnfinished = (accountId: string, broadcastId: string, status: 'claimed' | 'pending', error: string) => sql`
with changed as (
  update broadcast_recipients
     set status = 'failed', error = ${error}, finished_at = now()
   where account_id = ${accountId} and broadcast_id = ${broadcastId} and status = ${status}
  returning 1
)
update broadcasts
   set failed = failed + (select count(*) from changed), updated_at = now()
 where account_id = ${accountId} and id = ${broadcastId}
returning (select count(*) from changed)::int as changed`;

/**
 * Recipients left claimed by a run that died: the provider may already have sent their
 * message, so they are failed, never sent again (no one is messaged twice).
 */
export async function failInterruptedRecipients(em: EntityManager, accountId: string, broadcastId: string): Promise<number> {
  const rows = await queryRows<{ changed: number }>(em, failUnfinished(accountId, broadcastId, 'claimed', INTERRUPTED_ERROR));
  return rows[0]?.changed ?? 0;
}

/** A broadcast stopped early: every recipient not yet tried fails with the reason. */
export async function failPendingRecipients(em: EntityManager, accountId: string, broadcastId: string, reason: string): Promise<number> {
  const rows = await queryRows<{ changed: number }>(em, failUnfinished(accountId, broadcastId, 'pending', reason));
  return rows[0]?.changed ?? 0;
}
