// Whether contacts may be added to lists: every list must exist (404), then
// belong to the account acted on (403), checked before anything is written.
import type { EntityManager } from '@mikro-orm/postgresql';
import { List } from '../db/entities/index.ts';
import { ForbiddenError, NotFoundError } from '../errors.ts';

export async function requireListsForContacts(em: EntityManager, accountId: string, listIds: string[]): Promise<void> {
  if (listIds.length === 0) return;
  // Raw SQL: contact creation runs this on every request that names lists.
  const lists = await em.execute<{ id: string; account_id: string }[]>(
    'select id, account_id from lists where id in (select json_array_elements_text(?::json))',
    [JSON.stringify(listIds)],
  );
  const owners = new Map(lists.map((list) => [list.id, list.account_id]));
  const missing = listIds.find((id) => !owners.has(id));
  if (missing) throw new NotFoundError(`List ${missing} not found`);
  const foreign = listIds.find((id) => owners.get(id) !== accountId);
  if (foreign) throw new ForbiddenError(`You do not have permission to add contacts to list ${foreign}`);
}

/** A list of the account, or 404 (another account's list is not found). */
export async function requireOwnList(em: EntityManager, accountId: string, listId: string): Promise<List> {
  const list = await em.findOne(List, { id: listId, account: accountId });
  if (!list) throw new NotFoundError(`List ${listId} not found`);
  return list;
}
