// Unarchiving a contact and announcing it (Contact Unarchived), so that the event exists
// exactly when the contact went from archived to not: the update returns the contact only
// when it was archived (re-checked by UPDATE on the newest row, under its lock), and only
// then is the event written, by the one event writer, in the same transaction. A contact
// already unarchived, or unarchived concurrently, is announced by nobody a second time.
// Runs inside an ORM transaction (the API, a WhatsApp inbound); a widget visitor's message
// composes the same update and event into its own statement.
import { prepared, queryRows, runSql, sql, type SqlRunner } from '../../db/sql.ts';
import { eventsOf, insertEventsSql, newEventRow, type EventRow } from '../../events/sql/insert-events.ts';

/** Why the contact came back: the API call or a message the contact sent. */
export type UnarchiveCause = 'api' | 'inbound_message';

export type UnarchiveOutcome = { found: boolean; unarchived: boolean };

type ContactBlock = { id: string; phone_number: string | null; email: string | null; first_name: string; last_name: string };

/**
 * The SET list that unarchives a contact's row: this module's statement's, and that of a
 * caller that read the contact archived under its row lock and updates the row in its own
 * statement, with contactUnarchivedEvent (one statement cannot update a row twice).
 */
export const UNARCHIVED_SET = sql`archived_at = null, updated_at = now()`;

const unarchive = (accountId: string, contactId: string) =>
  prepared(
    'unarchive-contact',
    sql`with unarchived as (
  update contacts set ${UNARCHIVED_SET}
   where id = ${contactId} and account_id = ${accountId} and archived_at is not null
  returning id, phone_number, email, first_name, last_name
)
select exists (select 1 from contacts where id = ${contactId} and account_id = ${accountId}) as found,
       (select to_jsonb(u) from unarchived u) as contact`,
  );

/** The Contact Unarchived event of a contact unarchived under its lock (with UNARCHIVED_SET). */
export function contactUnarchivedEvent(contact: ContactBlock, cause: UnarchiveCause): EventRow {
  return newEventRow('Contact Unarchived', { contact, unarchived_by: cause });
}

/** Unarchives on `db`'s transaction (an EntityManager's, or a pg client inside BEGIN). */
export async function unarchiveContactRow(db: SqlRunner, accountId: string, contactId: string, cause: UnarchiveCause): Promise<UnarchiveOutcome> {
  const [row] = await queryRows<{ found: boolean; contact: ContactBlock | null }>(db, unarchive(accountId, contactId));
  if (!row?.contact) return { found: row?.found ?? false, unarchived: false };
  await runSql(db, insertEventsSql(eventsOf(accountId, [contactUnarchivedEvent(row.contact, cause)])));
  return { found: true, unarchived: true };
}
