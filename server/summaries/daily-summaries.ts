// The nightly digest: for every account with messages on a (UTC) day, one
// `daily` summary (no contact) and a Daily Summary Created event, written in
// one transaction per account. Running it again for the same day adds nothing.
import { UniqueConstraintViolationException, type EntityManager } from '@mikro-orm/postgresql';
import { Message, Summary } from '../db/entities/index.ts';
import { newId } from '../db/ids.ts';
import { queryRows, sql } from '../db/sql.ts';
import { InvalidInputError } from '../errors.ts';
import { emit } from '../events/emit.ts';
import { keyPoints } from './extractive-summarizer.ts';
import { toSummaryRecord } from './summary-record.ts';

const DAY_MS = 86_400_000;
/** The newest messages of a day that key points are drawn from; the counts cover them all. */
const MAX_SUMMARIZED_MESSAGES = 2_000;

export type DailySummaryWritten = { accountId: string; summaryId: string };

/** `YYYY-MM-DD` → the UTC start of that day and of the next. */
export function dayBounds(day: string): { start: Date; end: Date } {
  const start = new Date(`${day}T00:00:00.000Z`);
  if (!/^\d{4}-\d{2}-\d{2}$/.test(day) || Number.isNaN(start.getTime()) || start.toISOString().slice(0, 10) !== day) {
    throw new InvalidInputError(`day must be a date like 2026-01-31, not "${day}"`);
  }
  return { start, end: new Date(start.getTime() + DAY_MS) };
}

/** The UTC day before the given moment: what a run just after midnight summarizes. */
export function previousUtcDay(moment: Date): string {
  return new Date(moment.getTime() - DAY_MS).toISOString().slice(0, 10);
}

export async function writeDailySummaries(em: EntityManager, day: string): Promise<DailySummaryWritten[]> {
  const { start, end } = dayBounds(day);
  const accounts = await queryRows<{ account_id: string }>(
    em,
    sql`select distinct account_id from messages
         where created_at >= ${start.toISOString()}::timestamptz and created_at < ${end.toISOString()}::timestamptz order by account_id`,
  );
  const written: DailySummaryWritten[] = [];
  for (const { account_id: accountId } of accounts) {
    // A fork per account keeps the identity map small on large runs.
    const summaryId = await writeAccountDailySummary(em.fork(), accountId, day, start, end);
    if (summaryId) written.push({ accountId, summaryId });
  }
  return written;
}

async function writeAccountDailySummary(em: EntityManager, accountId: string, day: string, start: Date, end: Date): Promise<string | null> {
  if (await em.count(Summary, { account: accountId, kind: 'daily', day })) return null;
  const [counts] = await queryRows<{ total: string; inbound: string; contacts: string }>(
    em,
    sql`select count(*) as total, count(*) filter (where direction = 'inbound') as inbound, count(distinct contact_id) as contacts
       from messages where account_id = ${accountId}
        and created_at >= ${start.toISOString()}::timestamptz and created_at < ${end.toISOString()}::timestamptz`,
  );
  const total = Number(counts.total);
  const inbound = Number(counts.inbound);
  const contacts = Number(counts.contacts);
  const newest = await em.find(
    Message,
    { account: accountId, createdAt: { $gte: start, $lt: end } },
    { orderBy: { createdAt: 'desc', id: 'desc' }, limit: MAX_SUMMARIZED_MESSAGES, fields: ['direction', 'body'] },
  );
  const points = keyPoints(newest.reverse());
  const text =
    `Daily summary for ${day}: ${total} ${total === 1 ? 'message' : 'messages'} (${inbound} inbound, ${total - inbound} outbound) ` +
    `with ${contacts} ${contacts === 1 ? 'contact' : 'contacts'}.` +
    (points.length ? ` Key points: ${points.join(' ')}` : '');

  try {
    return await em.transactional(async (tx) => {
      const summary = tx.create(Summary, {
        id: newId('sum'),
        account: accountId,
        contact: null,
        kind: 'daily',
        summary: text,
        messageCount: total,
        day,
        createdAt: new Date(),
      });
      tx.persist(summary);
      await tx.flush();
      await emit(tx, accountId, 'Daily Summary Created', { day, summary: { ...toSummaryRecord(summary), day } });
      return summary.id;
    });
  } catch (error) {
    // Another run wrote this account's summary for the day first.
    if (error instanceof UniqueConstraintViolationException) return null;
    throw error;
  }
}
