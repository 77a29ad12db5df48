// GET /lists/{id}/contacts: a list's contacts, by contact id, a page at a time.
import type { EntityManager } from '@mikro-orm/postgresql';
import { Contact } from '../db/entities/index.ts';
import { queryRows, sql } from '../db/sql.ts';
import { keysetPage, type PageInput } from '../pagination.ts';
import type { Secrets } from '../secrets.ts';
import { toContactRecord, type ContactRecord } from '../contacts/contact-record.ts';
import { requireOwnList } from './list-access.ts';

export async function listListContacts(
  em: EntityManager,
  secrets: Secrets,
  accountId: string,
  listId: string,
  input: PageInput,
): Promise<{ contacts: ContactRecord[]; next_cursor: string | null }> {
  await requireOwnList(em, accountId, listId);
  const { items, next_cursor } = await keysetPage(secrets, `list-contacts:${accountId}:${listId}`, input, async (after, take) => {
    const idRows = await queryRows<{ id: string }>(
      em,
      sql`select cl.contact_id as id from contact_lists cl
       where cl.list_id = ${listId} and cl.account_id = ${accountId} and (${after}::text is null or cl.contact_id > ${after}::text)
       order by cl.contact_id limit ${take}`,
    );
    const ids = idRows.map((row) => row.id);
    return ids.length ? em.find(Contact, { id: { $in: ids }, account: accountId }, { orderBy: { id: 'asc' } }) : [];
  });
  return { contacts: items.map(toContactRecord), next_cursor };
}
