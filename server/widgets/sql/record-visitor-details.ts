// The writer of a chat-widget visitor's details (the contact's `widget` block): what their
// page reported with a message (its URL, the referrer, the browser's language), the user agent
// of the request, and when they were first and last seen. A statement part composed into the
// visitor message's own write (sql/store-visitor-message.ts), so it costs no round trip. The
// latest page, language and browser are kept; the referrer is the first one reported (where
// the visitor came from), and nothing reported keeps what was known.
import { sql, type Sql } from '../../db/sql.ts';

export type VisitorDetails = {
  pageUrl: string | null;
  referrer: string | null;
  language: string | null;
  userAgent: string | null;
};

/** Longest user agent kept; browsers send about 150 characters. */
export const MAX_USER_AGENT_LENGTH = 512;

/** The request's User-Agent as kept: cut to MAX_USER_AGENT_LENGTH, null when absent or blank. */
export function userAgentOf(header: string | string[] | undefined): string | null {
  const value = Array.isArray(header) ? header[0] : header;
  const text = value?.trim().slice(0, MAX_USER_AGENT_LENGTH);
  return text ? text : null;
}

export function recordVisitorDetailsSql(accountId: string, contactId: string, details: VisitorDetails, seenAt: Date): Sql {
  const at = seenAt.toISOString();
  return sql`insert into contact_widget_details as d (contact_id, account_id, page_url, referrer, language, user_agent, first_seen_at, last_seen_at)
  values (${contactId}::text, ${accountId}::text, ${details.pageUrl}::text, ${details.referrer}::text, ${details.language}::text,
          ${details.userAgent}::text, ${at}::timestamptz, ${at}::timestamptz)
  on conflict (contact_id, account_id) do update
     set page_url = coalesce(excluded.page_url, d.page_url), referrer = coalesce(d.referrer, excluded.referrer),
         language = coalesce(excluded.language, d.language), user_agent = coalesce(excluded.user_agent, d.user_agent),
         last_seen_at = greatest(d.last_seen_at, excluded.last_seen_at)`;
}
