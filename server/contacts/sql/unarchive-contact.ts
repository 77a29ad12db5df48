// Unarchiving a contact and announcing it (Contact Unarchived) in ONE statement, so the
// event exists exactly when the contact went from archived to not: a contact already
// unarchived (or unarchived concurrently, re-checked by UPDATE on the newest row) is
// announced by nobody a second time. Runs inside an ORM transaction (the API, a WhatsApp
// inbound) or on a pg client's transaction (a widget visitor's message).
import type { EntityManager } from '@mikro-orm/postgresql';
import type pg from 'pg';
import { newEventRow, payloadWithUserSql } from '../../events/emit.ts';

// ? in order: contact id, account id, event id, event payload without `user`, request id,
// then contact id and account id again for `found`. The contact block goes in as data.contact.
const UNARCHIVE_CONTACT = `
with unarchived as (
  update contacts set archived_at = null, updated_at = now()
   where id = ?::text and account_id = ?::text and archived_at is not null
  returning id, account_id, phone_number, email, first_name, last_name
), event as (
  insert into events (id, account_id, name, payload, request_id)
  select ?::text, a.id, 'Contact Unarchived',
         ${payloadWithUserSql(
           `jsonb_set(?::jsonb, '{data,contact}', jsonb_build_object('id', u.id, 'phone_number', u.phone_number, 'email', u.email, 'first_name', u.first_name, 'last_name', u.last_name))`,
           'a',
         )}, ?::text
    from unarchived u join accounts a on a.id = u.account_id
)
select exists (select 1 from contacts where id = ?::text and account_id = ?::text) as found,
       exists (select 1 from unarchived) as unarchived`;

let parameter = 0;
const UNARCHIVE_CONTACT_PREPARED = { name: 'unarchive-contact', text: UNARCHIVE_CONTACT.replace(/\?/g, () => `$${(parameter += 1)}`) };

/** Why the contact came back: the API call or a message the contact sent. */
export type UnarchiveCause = 'api' | 'inbound_message';

export type UnarchiveOutcome = { found: boolean; unarchived: boolean };

/** Unarchives on `db`'s transaction (an EntityManager's, or a pg client inside BEGIN). */
export async function unarchiveContactRow(
  db: EntityManager | pg.ClientBase,
  accountId: string,
  contactId: string,
  cause: UnarchiveCause,
): Promise<UnarchiveOutcome> {
  const event = newEventRow('Contact Unarchived', { contact: null, unarchived_by: cause });
  const values = [contactId, accountId, event.id, JSON.stringify(event.payload), event.requestId, contactId, accountId];
  const [row] =
    'execute' in db
      ? await db.execute<UnarchiveOutcome[]>(UNARCHIVE_CONTACT, values)
      : (await db.query<UnarchiveOutcome>({ ...UNARCHIVE_CONTACT_PREPARED, values })).rows;
  return row!;
}
