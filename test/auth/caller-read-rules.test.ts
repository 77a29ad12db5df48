// The rules of a read that rides in the caller's statement (server/auth/caller-read.ts), without
// a database: the value is used only for the same question of the same account, and the
// statement computes it only when the caller is usable, over the caller's own account.
import { expect, test } from 'vitest';
import { callerReadColumn, readValue, type CallerReadValue } from '../../server/auth/caller-read.ts';
import { sql } from '../../server/db/sql.ts';

const rode: CallerReadValue = { key: 'contact-id:+14155550100', accountId: 'usr_a', value: 'ct_1' };

test('the value is used for the same key and the same account only', () => {
  expect(readValue(rode, 'contact-id:+14155550100', 'usr_a')).toEqual({ value: 'ct_1' });
  expect(readValue(rode, 'contact-id:+14155550101', 'usr_a')).toBeUndefined();
  expect(readValue(rode, 'contact-id:+14155550100', 'usr_b')).toBeUndefined();
  expect(readValue(undefined, 'contact-id:+14155550100', 'usr_a')).toBeUndefined();
});

test('a read that found nothing is still an answer: null is used, not read again', () => {
  expect(readValue({ ...rode, value: null }, rode.key, 'usr_a')).toEqual({ value: null });
});

test("the column reads over the account it is given, only when the caller is usable", () => {
  const read = { key: 'k', select: (account: ReturnType<typeof sql>) => sql`(select id from contacts where account_id = ${account} and phone_number = ${'+1'})` };
  const column = callerReadColumn(read, sql`${'usr_a'}::text`);
  expect(column.text).toBe(', case when caller.usable then (select id from contacts where account_id = $1::text and phone_number = $2) end as caller_read');
  expect(column.values).toEqual(['usr_a', '+1']);
  expect(callerReadColumn(null, sql`${'usr_a'}::text`).text).toBe('');
});
