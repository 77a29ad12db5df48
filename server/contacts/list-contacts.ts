// The paged listing of an account's contacts, oldest first: the unarchived ones, or with
// `archived` the archived ones only (each listing has its own cursors).
import type { EntityManager } from '@mikro-orm/postgresql';
import { Contact } from '../db/entities/index.ts';
import { findEntityPage, readPage, type PageInput } from '../pagination.ts';
import type { Secrets } from '../secrets.ts';
import { toContactRecord, type ContactRecord } from './contact-record.ts';

type ListInput = PageInput & { archived?: boolean };

function scopeOf(accountId: string, input: ListInput): string {
  return input.archived ? `contacts-archived:${accountId}` : `contacts:${accountId}`;
}

/**
 * A lookup (GET /contacts by phone number or e-mail) reads no page, but a cursor it carries is
 * still held to the rule the OpenAPI document gives every cursor: one of this listing's, else 400.
 */
export function checkContactsCursor(secrets: Secrets, accountId: string, input: ListInput): void {
  if (input.cursor !== undefined) readPage(secrets, scopeOf(accountId, input), input);
}

export async function listContacts(
  em: EntityManager,
  secrets: Secrets,
  accountId: string,
  input: ListInput,
): Promise<{ contacts: ContactRecord[]; next_cursor: string | null }> {
  const scope = scopeOf(accountId, input);
  const { items, next_cursor } = await findEntityPage(em, Contact, { account: accountId, archivedAt: input.archived ? { $ne: null } : null }, secrets, scope, input);
  return { contacts: items.map(toContactRecord), next_cursor };
}
