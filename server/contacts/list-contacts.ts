// The paged listing of an account's contacts, oldest first: the unarchived ones, or with
// `archived` the archived ones only (each listing has its own cursors).
import type { EntityManager } from '@mikro-orm/postgresql';
import { Contact } from '../db/entities/index.ts';
import { findEntityPage, type PageInput } from '../pagination.ts';
import type { Secrets } from '../secrets.ts';
import { toContactRecord, type ContactRecord } from './contact-record.ts';

export async function listContacts(
  em: EntityManager,
  secrets: Secrets,
  accountId: string,
  input: PageInput & { archived?: boolean },
): Promise<{ contacts: ContactRecord[]; next_cursor: string | null }> {
  const scope = input.archived ? `contacts-archived:${accountId}` : `contacts:${accountId}`;
  const { items, next_cursor } = await findEntityPage(em, Contact, { account: accountId, archivedAt: input.archived ? { $ne: null } : null }, secrets, scope, input);
  return { contacts: items.map(toContactRecord), next_cursor };
}
