// `emit` for a change made through the ORM: one event written by the one writer
// (sql/insert-events.ts) on the change's transaction.
import type { EntityManager } from '@mikro-orm/postgresql';
import { runSql } from '../db/sql.ts';
import type { EventName } from './event-names.ts';
import { eventsOf, insertEventsSql, newEventRow } from './sql/insert-events.ts';

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
