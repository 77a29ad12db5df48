// POST and DELETE /contacts/lists: one contact in or out of one list; and whether
// contacts may be added to lists at all: every list must exist (404), then belong to
// the account acted on (403), checked before anything is written.
import type { EntityManager } from '@mikro-orm/postgresql';
import { ContactList, List } from '../db/entities/index.ts';
import { runSql, sql } from '../db/sql.ts';
import { ForbiddenError, MissingParametersError, NotFoundError } from '../errors.ts';
import { requireContact } from './find-contact.ts';

export type MembershipInput = { contactId?: string; listId?: string };

async function resolveMembership(em: EntityManager, accountId: string, input: MembershipInput) {
  if (!input.contactId || !input.listId) throw new MissingParametersError('Missing required parameters: contactId and listId');
  // The account's own list is read by its account; only a refusal looks further, to tell
  // another account's list (403) from none (404).
  const list = await em.findOne(List, { id: input.listId, account: accountId }, { fields: ['id'] });
  if (!list) {
    const exists = await em.count(List, { id: input.listId });
    if (exists === 0) throw new NotFoundError(`List ${input.listId} not found`);
    throw new ForbiddenError('You do not have permission to change this list');
  }
  const contact = await requireContact(em, accountId, input.contactId);
  return { contactId: contact.id, listId: list.id };
}

export async function addContactToList(em: EntityManager, accountId: string, input: MembershipInput) {
  const { contactId, listId } = await resolveMembership(em, accountId, input);
  await runSql(em, sql`insert into contact_lists (contact_id, list_id, account_id) values (${contactId}, ${listId}, ${accountId}) on conflict do nothing`);
  return { message: 'Contact added to list successfully' };
}

export async function removeContactFromList(em: EntityManager, accountId: string, input: MembershipInput) {
  const { contactId, listId } = await resolveMembership(em, accountId, input);
  await em.nativeDelete(ContactList, { account: accountId, contact: contactId, list: listId });
  return { message: 'Contact removed from list successfully' };
}

/**
 * Throws why contacts may not be added to these lists: the first missing one (404),
 * else the first of another account (403). `existing`: the lists that exist, with owners.
 */
export function refuseListsForContacts(accountId: string, listIds: string[], existing: { id: string; account_id: string }[]): never {
  const owners = new Map(existing.map((list) => [list.id, list.account_id]));
  const missing = listIds.find((id) => !owners.has(id));
  if (missing) throw new NotFoundError(`List ${missing} not found`);
  const foreign = listIds.find((id) => owners.get(id) !== accountId);
  if (foreign) throw new ForbiddenError(`You do not have permission to add contacts to list ${foreign}`);
  throw new Error('refuseListsForContacts: every list is allowed');
}
