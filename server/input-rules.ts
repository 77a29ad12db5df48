// Rules every request's input (and the identity claims of the tokens it carries)
// obeys before anything reads it, whatever the procedure: no NUL characters and no lone UTF-16 surrogates (PostgreSQL text
// and json cannot store them and refuse the whole query), and JSON nested at
// most MAX_INPUT_DEPTH levels (serialisers and validators recurse, so deeper
// input would overflow the stack). Integers
// that land in PostgreSQL `integer` columns are bounded by their schemas
// (`columnInteger`), so the OpenAPI document states the bound as well.
import { z } from 'zod';
import { InvalidInputError } from './errors.ts';

/** How deep objects and arrays may nest in an input; the input itself is level 1. */
export const MAX_INPUT_DEPTH = 32;

/** The range of a PostgreSQL `integer` column. */
export const INT32_MIN = -2_147_483_648;
export const INT32_MAX = 2_147_483_647;

const NUL = '\u0000';

/**
 * The text rule for the OpenAPI document: a string this pattern finds (it contains a NUL)
 * is refused. Written so every regular-expression engine reads it alike (ECMA-262 with or
 * without the `u` flag, Python, Rust). A lone surrogate cannot be put in a pattern portably
 * (Rust's engine, which validators use, refuses surrogate escapes); strings of well-formed
 * Unicode, as I-JSON (RFC 7493) asks, are stated in words.
 */
export const NUL_PATTERN = '\\u0000';

type UnstorableReason = 'nul_character' | 'lone_surrogate';

/**
 * Why PostgreSQL could not store `text`; undefined when it can. A lone surrogate (half of
 * a UTF-16 pair, as JSON's `"\ud800"` escape makes) has no UTF-8 form; isWellFormed()
 * finds one without copying the string.
 */
function unstorableReason(text: string): UnstorableReason | undefined {
  if (text.includes(NUL)) return 'nul_character';
  return text.isWellFormed() ? undefined : 'lone_surrogate';
}

function unstorableText(field: string, reason: UnstorableReason): InvalidInputError {
  const what = reason === 'nul_character' ? 'a NUL character (\\u0000)' : 'a lone UTF-16 surrogate (\\ud800 to \\udfff without its pair)';
  return new InvalidInputError(`${field} must not contain ${what}`, { reason });
}

function fieldName(path: readonly (string | number)[]): string {
  return path.length ? path.join('.') : 'body';
}

/**
 * Refuses NUL characters in every query-string name and value (credentials and `userId`
 * included: authentication sends them to SQL) and, in the input, NUL characters and lone
 * surrogates in every string and object key, and nesting deeper than MAX_INPUT_DEPTH.
 * URLSearchParams decodes to well-formed text (a lone surrogate becomes U+FFFD), so the
 * query needs no surrogate check. The walk keeps its own stack, so a 5,000-deep input is
 * refused, not a crash.
 */
export function checkRequestInput(input: unknown, query?: URLSearchParams): void {
  if (query) {
    for (const [name, value] of query) {
      if (name.includes(NUL)) throw unstorableText('A query parameter name', 'nul_character');
      if (value.includes(NUL)) throw unstorableText(name, 'nul_character');
    }
  }
  const problem = findInputProblem(input);
  if (problem) throw problem;
}

/**
 * The first breach of the input rules in a JSON value (text PostgreSQL cannot store,
 * nesting too deep), as the refusal naming the field; undefined when there is none.
 */
export function findInputProblem(input: unknown): InvalidInputError | undefined {
  const pending: { value: unknown; path: (string | number)[] }[] = [{ value: input, path: [] }];
  while (pending.length) {
    const { value, path } = pending.pop()!;
    if (typeof value === 'string') {
      const reason = unstorableReason(value);
      if (reason) return unstorableText(fieldName(path), reason);
      continue;
    }
    if (typeof value !== 'object' || value === null) continue;
    // `path` holds one key per enclosing container, so this value is level path.length + 1.
    if (path.length + 1 > MAX_INPUT_DEPTH) {
      return new InvalidInputError(`${fieldName(path.slice(0, 1))} nests objects or arrays deeper than ${MAX_INPUT_DEPTH} levels`, {
        reason: 'too_deep',
      });
    }
    if (Array.isArray(value)) {
      for (let index = value.length - 1; index >= 0; index -= 1) pending.push({ value: value[index], path: [...path, index] });
      continue;
    }
    for (const [key, member] of Object.entries(value)) {
      const reason = unstorableReason(key);
      if (reason) return unstorableText(`A field name in ${fieldName(path)}`, reason);
      pending.push({ value: member, path: [...path, key] });
    }
  }
  return undefined;
}

/** The claims by which a token names its holder (an OIDC ID token, a widget visitor token). */
const IDENTITY_CLAIMS = ['sub', 'email', 'name'] as const;

/**
 * The first identity claim of a verified token that breaks the input rules, as the refusal
 * naming it; undefined when there is none. The caller refuses the whole token (401): a
 * signed claim is not something the request can correct.
 */
export function findClaimProblem(claims: Readonly<Record<string, unknown>>): InvalidInputError | undefined {
  return findInputProblem(Object.fromEntries(IDENTITY_CLAIMS.map((claim) => [claim, claims[claim]])));
}

/**
 * An integer input stored in a PostgreSQL `integer` column: zod's int32, whose
 * bounds also appear in the OpenAPI document. `field` prefixes the messages
 * when the schema's other messages name the field themselves.
 */
export function columnInteger(field?: string) {
  const subject = field ? `${field} ` : '';
  return z.int32({
    error: (issue) => {
      if (issue.code === 'too_big') return `${subject}must be at most ${INT32_MAX}`;
      if (issue.code === 'too_small') return `${subject}must be at least ${INT32_MIN}`;
      return `${subject}must be a whole number`;
    },
  });
}

/**
 * An ISO 8601 date-time with a time zone that a PostgreSQL `timestamptz` column can
 * hold as the service writes it (years 0001 to 9999 in UTC; PostgreSQL refuses year 0).
 * `message` is the whole refusal, naming the field.
 */
export function columnDateTime(message: string) {
  return z.iso
    .datetime({ offset: true, error: message })
    .refine((value) => {
      const year = new Date(value).getUTCFullYear();
      return year >= 1 && year <= 9999;
    }, message)
    .meta({ description: 'ISO 8601 date-time with a time zone, between the years 0001 and 9999 (UTC).' });
}
