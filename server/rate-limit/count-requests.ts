// An ID-token session's rate-limit accounting: each request counted with one upsert in the
// session's bucket and one in its account's (sql/rate-counters.ts), in the statement that
// resolves the session (server/auth). API keys spend leased tokens instead
// (spend-key-tokens.ts). See limits.ts for the rules.
import type { CountOutcome } from './limits.ts';

/** What the session's statement returns that the accounting reads (server/auth/sql/resolve-caller.ts has the whole row). */
export type CountedSessionRow = {
  account_id: string;
  bucket_limit: number;
  usable: boolean;
  now_epoch: number;
  window_epoch: number;
  /** This request's count, null when not counted (refused, or counting off). */
  bucket_counted: number | null;
  account_counted: number | null;
  /** Counts before this statement (snapshot), for refused and uncounted requests. */
  bucket_before: number | null;
  account_before: number | null;
};

/** A session's count as its statement reports it: the credential's bucket refuses first. */
export function sessionOutcome(row: CountedSessionRow): CountOutcome {
  return {
    refusedBy: row.bucket_counted === null ? 'credential' : row.account_counted === null ? 'account' : null,
    credentialUsed: row.bucket_counted ?? row.bucket_before ?? 0,
    accountUsed: row.account_counted ?? row.account_before ?? 0,
  };
}
