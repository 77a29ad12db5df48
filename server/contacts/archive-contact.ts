// Archiving a contact takes it out of GET /contacts pages (lookups still find it);
// unarchiving, by POST /contacts/{id}/unarchive or by a new message from the contact,
// brings it back and announces Contact Unarchived, once per unarchive. The spec has no
// event for archiving, so archiving announces nothing.
import type { EntityManager } from '@mikro-orm/postgresql';
import type pg from 'pg';
import { queryRows, sql } from '../db/sql.ts';
import { NotFoundError } from '../errors.ts';
import { unarchiveContactRow } from './sql/unarchive-contact.ts';

export type ArchiveState = { contactId: string; archived: boolean };

/** Archiving an archived contact keeps its first archiving time. */
export async function archiveContact(em: EntityManager, accountId: string, contactId: string): Promise<ArchiveState> {
  const rows = await queryRows<{ id: string }>(
    em,
    sql`update contacts set archived_at = coalesce(archived_at, now()), updated_at = now()
         where id = ${contactId} and account_id = ${accountId} returning id`,
  );
  if (rows.length === 0) throw new NotFoundError('Contact not found');
  return { contactId, archived: true };
}

export async function unarchiveContact(em: EntityManager, accountId: string, contactId: string): Promise<ArchiveState> {
  const outcome = await unarchiveContactRow(em, accountId, contactId, 'api');
  if (!outcome.found) throw new NotFoundError('Contact not found');
  return { contactId, archived: false };
}

/**
 * A message from the contact brings an archived contact back. Call inside the transaction
 * that stores the message, so the event commits with it; a contact that is not archived
 * costs one UPDATE that matches nothing.
 */
export async function unarchiveOnInbound(db: EntityManager | pg.ClientBase, accountId: string, contactId: string): Promise<void> {
  await unarchiveContactRow(db, accountId, contactId, 'inbound_message');
}
