// The contact lookup of GET /contacts?phoneNumber=|email=, on the pg pool: it runs on
// every lookup request and needs only the id, so it stays off the ORM (one prepared
// statement per identifier combination, so each gets its own index plan).
import type pg from 'pg';
import { prepared, queryRows, sql } from '../../db/sql.ts';

// Same match as findContactByIdentifier: the account's contact with this E.164 number
// and/or this e-mail case-insensitively (ILIKE with its wildcards escaped), lowest id first.
const byPhone = (accountId: string, phoneNumber: string) =>
  prepared('contact-id-by-phone', sql`select id from contacts where account_id = ${accountId} and phone_number = ${phoneNumber} order by id limit 1`);
const byEmail = (accountId: string, pattern: string) =>
  prepared('contact-id-by-email', sql`select id from contacts where account_id = ${accountId} and email ilike ${pattern} order by id limit 1`);
const byBoth = (accountId: string, phoneNumber: string, pattern: string) =>
  prepared(
    'contact-id-by-phone-and-email',
    sql`select id from contacts where account_id = ${accountId} and phone_number = ${phoneNumber} and email ilike ${pattern} order by id limit 1`,
  );

/** `%`, `_` and `\` match themselves (`\` is ILIKE's escape character). */
export function exactIlikePattern(text: string): string {
  return text.replace(/[\\%_]/g, '\\$&');
}

/** The id of the account's contact matching a normalised phone number and/or e-mail; null when none. */
export async function selectContactId(
  pool: pg.Pool,
  accountId: string,
  phoneNumber: string | undefined,
  email: string | undefined,
): Promise<string | null> {
  const query =
    phoneNumber && email
      ? byBoth(accountId, phoneNumber, exactIlikePattern(email))
      : phoneNumber
        ? byPhone(accountId, phoneNumber)
        : byEmail(accountId, exactIlikePattern(email ?? ''));
  const rows = await queryRows<{ id: string }>(pool, query);
  return rows[0]?.id ?? null;
}
