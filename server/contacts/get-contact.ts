// GET /contacts/{contactId}: one contact of the account, for a console's contact panel, in one
// statement: the contact, its tags' names, its widget's name and the visitor's details. Another
// account's contact is not found.
import type { EntityManager } from '@mikro-orm/postgresql';
import { queryRows, rawSql, sql } from '../db/sql.ts';
import { NotFoundError } from '../errors.ts';
import { toContactDetails, type ContactDetailsRecord, type ContactDetailsRow } from './contact-details-record.ts';

const iso = (column: string) => rawSql(`to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`);

export async function getContact(em: EntityManager, accountId: string, contactId: string): Promise<ContactDetailsRecord> {
  const [row] = await queryRows<ContactDetailsRow>(
    em,
    sql`select c.id, c.first_name, c.last_name, c.email, c.phone_number, c.channel, c.is_bot_active, c.do_not_disturb,
       c.archived_at is not null as archived, ${iso('c.created_at')} as created_at,
       array(select t.name from contact_tags ct join tags t on t.id = ct.tag_id and t.account_id = ct.account_id
              where ct.contact_id = c.id and ct.account_id = c.account_id order by t.name) as tags,
       c.chat_widget_id, w.name as widget_name,
       d.page_url, d.referrer, d.language, d.user_agent, ${iso('d.first_seen_at')} as first_seen_at, ${iso('d.last_seen_at')} as last_seen_at
  from contacts c
  left join chat_widgets w on w.id = c.chat_widget_id and w.account_id = c.account_id
  left join contact_widget_details d on d.contact_id = c.id and d.account_id = c.account_id
 where c.id = ${contactId} and c.account_id = ${accountId}`,
  );
  if (!row) throw new NotFoundError('Contact not found');
  return toContactDetails(row);
}
