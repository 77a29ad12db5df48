// The transactional outbox's names, and `emit` for a change made through the ORM: one
// event written by the one writer (sql/insert-events.ts) on the change's transaction.
import type { EntityManager } from '@mikro-orm/postgresql';
import { runSql } from '../db/sql.ts';
import { eventsOf, insertEventsSql, newEventRow } from './sql/insert-events.ts';

export const EVENT_NAMES = [
  'Contact Created',
  'Human Alerted',
  'Appointment Booked',
  'Replies',
  'Reads',
  'Deliveries',
  'Credits Spent',
  'Credits Recharged',
  'Low Credit Balance',
  'Contact Paused',
  'Contact Do Not Disturb',
  'Contact Unarchived',
  'New Message',
  'Contact Resumed',
  'Chat Concluded',
  'Task Created',
  'Task Updated',
  'Task Completed',
  'Daily Summary Created',
  'Channel Connected',
  'Broadcast Started',
  'Broadcast Completed',
] as const;
export type EventName = (typeof EVENT_NAMES)[number];

/** The payload's `user` block: the account where the event happened. */
export type UserBlock = { id: string; email: string; name: string | null };

/**
 * Writes one event on `em`'s transaction (call it inside the transaction of the change it
 * announces). Returns the stable event id (the delivery id for webhooks).
 */
export async function emit(em: EntityManager, accountId: string, name: EventName, data: Record<string, unknown>): Promise<string> {
  const row = newEventRow(name, data);
  const { rowCount } = await runSql(em, insertEventsSql(eventsOf(accountId, [row])));
  if (rowCount !== 1) throw new Error(`event ${name} not written: account ${accountId} not found`);
  return row.id;
}
