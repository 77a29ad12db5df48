// GET /contacts/tags/{contactId}: the contact's tags, by name.
import type { EntityManager } from '@mikro-orm/postgresql';
import { requireContact } from '../contacts/find-contact.ts';
import { queryRows, sql } from '../db/sql.ts';
import { MissingParametersError } from '../errors.ts';
import type { TagRecord } from './tag-record.ts';

export async function listContactTags(em: EntityManager, accountId: string, contactId: string): Promise<TagRecord[]> {
  if (!contactId.trim()) throw new MissingParametersError('Missing required parameter: contactId');
  await requireContact(em, accountId, contactId);
  return queryRows<TagRecord>(
    em,
    sql`select t.id, t.name, t.description
       from contact_tags ct join tags t on t.id = ct.tag_id
      where ct.contact_id = ${contactId} and ct.account_id = ${accountId}
      order by t.name, t.id`,
  );
}
