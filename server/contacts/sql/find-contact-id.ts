// The contact lookup of GET /contacts?phoneNumber=|email=, on the pg pool: it runs on
// every lookup request and needs only the id, so it stays off the ORM (one prepared
// statement per identifier combination, so each gets its own index plan).
import type pg from 'pg';

// Same match as findContactByIdentifier: the account's contact with this E.164 number
// and/or this e-mail case-insensitively (ILIKE with its wildcards escaped), lowest id first.
const BY_PHONE = 'select id from contacts where account_id = $1 and phone_number = $2 order by id limit 1';
const BY_EMAIL = 'select id from contacts where account_id = $1 and email ilike $2 order by id limit 1';
const BY_BOTH = 'select id from contacts where account_id = $1 and phone_number = $2 and email ilike $3 order by id limit 1';

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
      ? { name: 'contact-id-by-phone-and-email', text: BY_BOTH, values: [accountId, phoneNumber, exactIlikePattern(email)] }
      : phoneNumber
        ? { name: 'contact-id-by-phone', text: BY_PHONE, values: [accountId, phoneNumber] }
        : { name: 'contact-id-by-email', text: BY_EMAIL, values: [accountId, exactIlikePattern(email ?? '')] };
  const { rows } = await pool.query<{ id: string }>(query);
  return rows[0]?.id ?? null;
}
