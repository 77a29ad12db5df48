// A read that rides in the caller's statement: a procedure whose answer is one small read of
// the caller's own account (the contact lookup) names it in its meta (`callerRead`), and
// the statement that confirms a key this process holds and counts the request computes it
// too, for the held key's account (a parameter, so the read is one shard's under Citus) and
// only when the key is live, so the request costs one round trip. The procedure uses the
// value only when its own parsed input asks exactly the same (`key`) of the same account;
// otherwise it reads as usual. Nothing rides for a key not held yet, a request that selects
// another account (`userId`), a session, or raw input the procedure would refuse.
import { rawSql, sql, type Sql } from '../db/sql.ts';

export type CallerRead = {
  /** What is read, in the procedure's own terms: equal keys ask the same of the same account. */
  key: string;
  /** One scalar subquery over the account `account` names. */
  select(account: Sql): Sql;
};

/** The value a caller statement read, for the account it resolved. */
export type CallerReadValue = { key: string; accountId: string; value: unknown };

/** The column a caller statement adds for the read of `account`: null when the caller is not usable. */
export function callerReadColumn(read: CallerRead | null, account: Sql): Sql {
  if (!read) return rawSql('');
  return sql`, case when caller.usable then ${read.select(account)} end as caller_read`;
}

/** The value the statement read, when it is the one asked of this account; undefined otherwise. */
export function readValue(read: CallerReadValue | undefined, key: string, accountId: string): { value: unknown } | undefined {
  return read && read.key === key && read.accountId === accountId ? { value: read.value } : undefined;
}
