// Who wrote a reply, in words: the `sender` a reply shows in GET /contacts/messages/{id}
// names the credential that wrote it (contract "A team on the conversations"): a scoped
// key's label (its `key_` id while it has none), an ID token's `name` (else `email`, else its
// subject), `api` for the main key. So each person on a team signs in with their own key or
// token, and the conversation says who answered.
import type { IncomingHttpHeaders } from 'node:http';
import { decodeJwt } from 'jose';
import { sql, type Sql } from '../db/sql.ts';
import { findInputProblem } from '../input-rules.ts';
import { pickCarrier } from './authenticate.ts';
import type { Credential } from './scopes.ts';

/** The main key is the account's shared credential: it names no one. */
export const MAIN_KEY_NAME = 'api';
/** Longest name taken from an ID token (a scoped key's label is at most 200 characters too). */
const MAX_NAME_LENGTH = 200;

/** A credential's name, or the scoped key whose label is read with the statement that needs it. */
export type Author = { name: string } | { scopedKeyId: string };

/** The claim as a name: text PostgreSQL can store, trimmed, cut to MAX_NAME_LENGTH; null when it is none. */
function claimText(value: unknown): string | null {
  if (typeof value !== 'string' || findInputProblem(value)) return null;
  const text = value.trim().slice(0, MAX_NAME_LENGTH);
  // A cut through a surrogate pair leaves half of it, which PostgreSQL cannot store.
  return text === '' ? null : text.isWellFormed() ? text : text.slice(0, -1);
}

/**
 * The author of what this request writes. An ID token's claims are read from the token this
 * request's authentication has just verified (its subject is the credential's id).
 */
export function authorOf(credential: Credential, request: { query: URLSearchParams; headers: IncomingHttpHeaders }): Author {
  if (credential.type === 'main') return { name: MAIN_KEY_NAME };
  if (credential.type === 'scoped') return { scopedKeyId: credential.id };
  const token = pickCarrier(request.query, request.headers)?.value;
  let claims: Record<string, unknown> = {};
  try {
    if (token) claims = decodeJwt(token);
  } catch {
    // Verified moments ago, so it decodes; were it not to, the subject still names the person.
  }
  return { name: claimText(claims.name) ?? claimText(claims.email) ?? credential.id };
}

/** The author's name as a select-list expression, so a scoped key's label costs no statement of its own. */
export function authorNameSql(author: Author): Sql {
  if ('name' in author) return sql`${author.name}::text`;
  return sql`(select coalesce(nullif(k.label, ''), k.id) from api_keys k where k.id = ${author.scopedKeyId})`;
}
