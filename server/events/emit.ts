// The transactional outbox. Every event the service announces is written here,
// by this one function, inside the transaction of the change it announces: the
// event exists exactly when the change committed. Webhook delivery reads it.
import type { EntityManager } from '@mikro-orm/postgresql';
import { Account, Event } from '../db/entities/index.ts';
import { newId } from '../db/ids.ts';
import { currentRequestId } from '../request-context.ts';

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
 * Writes one event row on `em`; the caller's flush or transaction commits it
 * with the change. Returns the stable event id (the delivery id for webhooks).
 */
export async function emit(
  em: EntityManager,
  accountId: string,
  name: EventName,
  data: Record<string, unknown>,
): Promise<string> {
  const account = await em.findOneOrFail(Account, accountId);
  const row = newEventRow(name, data);
  const user: UserBlock = { id: account.id, email: account.email, name: account.name ?? null };
  em.persist(em.create(Event, { id: row.id, account: account.id, name, payload: { ...row.payload, user }, requestId: row.requestId }));
  return row.id;
}

/**
 * SQL completing an event payload without its `user` block (newEventRow's) with that
 * block, read from the account row `account` (an alias with id, email and name).
 */
export function payloadWithUserSql(payload: string, account: string): string {
  return `${payload} || jsonb_build_object('user', jsonb_build_object('id', ${account}.id, 'email', ${account}.email, 'name', ${account}.name))`;
}

/**
 * A new event's id and payload without its `user` block, for statements that write the
 * event in SQL and fill `user` from the account row they read anyway.
 */
export function newEventRow(
  name: EventName,
  data: Record<string, unknown>,
): { id: string; name: EventName; payload: Record<string, unknown>; requestId: string | null } {
  const id = newId('evt');
  // The request being served, if any: its deliveries carry the id as X-Request-Id.
  return { id, name, payload: { event: name, event_id: id, occurred_at: new Date().toISOString(), data }, requestId: currentRequestId() ?? null };
}
