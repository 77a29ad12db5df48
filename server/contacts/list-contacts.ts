// The paged listing of an account's contacts, oldest first.
import type { EntityManager } from '@mikro-orm/postgresql';
import { Contact } from '../db/entities/index.ts';
import { findEntityPage, type PageInput } from '../pagination.ts';
import type { Secrets } from '../secrets.ts';
import { toContactRecord, type ContactRecord } from './contact-record.ts';

export async function listContacts(
  em: EntityManager,
  secrets: Secrets,
  accountId: string,
  input: PageInput,
): Promise<{ contacts: ContactRecord[]; next_cursor: string | null }> {
  const { items, next_cursor } = await findEntityPage(em, Contact, { account: accountId }, secrets, `contacts:${accountId}`, input);
  return { contacts: items.map(toContactRecord), next_cursor };
}
