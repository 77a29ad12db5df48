// The hot-path statements of a broadcast run: its recipients written once from the list,
// and batches of them claimed. A claim commits before any provider call, so a recipient
// is handed to the provider at most once, whatever happens to the process afterwards.
import type { EntityManager } from '@mikro-orm/postgresql';
import { queryRows, runSql, sql } from '../db/sql.ts';

/** Every contact of the list, once (re-running adds no one twice); returns the total. */
export async function materialiseRecipients(em: EntityManager, accountId: string, broadcastId: string, listId: string): Promise<number> {
  await runSql(
    em,
    sql`insert into broadcast_recipients (broadcast_id, contact_id, account_id, status)
     select ${broadcastId}::text, cl.contact_id, ${accountId}::text, 'pending'
       from contact_lists cl
       join contacts c on c.id = cl.contact_id and c.account_id = ${accountId}
      where cl.list_id = ${listId}
     on conflict do nothing`,
  );
  const rows = await queryRows<{ total: number }>(
    em,
    sql`update broadcasts
        set total = (select count(*) from broadcast_recipients where account_id = ${accountId} and broadcast_id = ${broadcastId}), updated_at = now()
      where account_id = ${accountId} and id = ${broadcastId} returning total`,
  );
  return Number(rows[0]?.total ?? 0);
}

export type ClaimedRecipient = { contactId: string; doNotDisturb: boolean };

/** The next `limit` pending recipients, claimed; `doNotDisturb` as the contact is now. */
export async function claimRecipients(em: EntityManager, accountId: string, broadcastId: string, limit: number): Promise<ClaimedRecipient[]> {
  const rows = await queryRows<{ contact_id: string; do_not_disturb: boolean }>(
    em,
    // The locked pick is a CTE, run once: as an IN subquery the planner may rescan it per
    // row, each rescan skipping the rows already claimed and locking the next batch.
    sql`with picked as (
       select contact_id from broadcast_recipients
        where account_id = ${accountId} and broadcast_id = ${broadcastId} and status = 'pending'
        order by contact_id
        limit ${limit}
          for update skip locked
     ), claimed as (
       update broadcast_recipients r
          set status = 'claimed', claimed_at = now()
         from picked
        where r.account_id = ${accountId} and r.broadcast_id = ${broadcastId} and r.contact_id = picked.contact_id
       returning r.contact_id)
     select claimed.contact_id, c.do_not_disturb
       from claimed join contacts c on c.account_id = ${accountId} and c.id = claimed.contact_id
      order by claimed.contact_id`,
  );
  return rows.map((row) => ({ contactId: row.contact_id, doNotDisturb: Boolean(row.do_not_disturb) }));
}
