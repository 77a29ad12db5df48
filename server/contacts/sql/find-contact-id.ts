// The contact lookup of GET /contacts?phoneNumber=|email=, on the pg pool: it runs on
// every lookup request and needs only the id, so it stays off the ORM (one prepared
// statement per identifier combination, so each gets its own index plan). The same match
// rides in the caller's statement when the lookup's key is held (server/auth/caller-read.ts).
import type pg from 'pg';
import { prepared, queryRows, sql, type Sql } from '../../db/sql.ts';

/**
 * Same match as findContactByIdentifier, as one scalar subquery: the contact of the account
 * `account` names (a parameter, or a column of an enclosing statement) with this E.164
 * number and/or this e-mail case-insensitively (ILIKE with its wildcards escaped), lowest id first.
 */
export function contactIdSubquery(account: Sql, phoneNumber: string | undefined, email: string | undefined): Sql {
  if (phoneNumber && email) {
    return sql`(select id from contacts where account_id = ${account} and phone_number = ${phoneNumber} and email ilike ${exactIlikePattern(email)} order by id limit 1)`;
  }
  if (phoneNumber) return sql`(select id from contacts where account_id = ${account} and phone_number = ${phoneNumber} order by id limit 1)`;
  return sql`(select id from contacts where account_id = ${account} and email ilike ${exactIlikePattern(email ?? '')} order by id limit 1)`;
}

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
  const label = phoneNumber && email ? 'contact-id-by-phone-and-email' : phoneNumber ? 'contact-id-by-phone' : 'contact-id-by-email';
  const rows = await queryRows<{ id: string | null }>(pool, prepared(label, sql`select ${contactIdSubquery(sql`${accountId}::text`, phoneNumber, email)} as id`));
  return rows[0]?.id ?? null;
}
