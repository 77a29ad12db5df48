// Rules every request's input (and the identity claims of the tokens it carries)
// obeys before anything reads it, whatever the procedure: no NUL characters and no lone UTF-16 surrogates (PostgreSQL text
// and json cannot store them and refuse the whole query), and JSON nested at
// most MAX_INPUT_DEPTH levels (serialisers and validators recurse, so deeper
// input would overflow the stack). Integers
// that land in PostgreSQL `integer` columns are bounded by their schemas
// (`columnInteger`), so the OpenAPI document states the bound as well.
import { z } from 'zod';
import { InvalidInputError } from './errors.ts';

/**
 * How deep objects and arrays may nest in an input; the input itself is level 1. Deep enough
 * for any structure a request names; a free-form value deeper than this is refused, and the
 * OpenAPI document states one schema per level (generators walk every level of it).
 */
export const MAX_INPUT_DEPTH = 8;

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

/** What String.prototype.trim() removes (ECMAScript white space and line terminators), as a character class body. */
export const BLANK_CHARACTERS = '\\t\\n\\v\\f\\r \\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000\\ufeff';

/**
 * Text with something besides white space, for a field whose blank value counts as absent
 * (the domain trims it): the text rule plus one character trim() keeps.
 */
export const NON_BLANK_TEXT_PATTERN = `^[^\\u0000]*[^\\u0000${BLANK_CHARACTERS}][^\\u0000]*$`;

/** Empty or white space only. */
export const BLANK_TEXT_PATTERN = `^[${BLANK_CHARACTERS}]*$`;

/** A blank value (empty or white space) of a field where blank is the same as absent, for `z.union([..., BlankText])`. */
export const BlankText = z.string().meta({
  pattern: BLANK_TEXT_PATTERN,
  description: 'Blank (empty or white space only): the same as leaving the field out.',
});

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

/** Replaces `find` in `text`, which must contain it (so a change in zod's pattern is noticed). */
function replaceOnce(text: string, find: string, replacement: string): string {
  if (!text.includes(find)) throw new Error(`zod's date-time pattern changed: ${find} not found`);
  return text.replace(find, replacement);
}

/**
 * zod's own pattern for an ISO date-time with an offset, its years 0001 to 9999 (0000 has no
 * UTC year 0001 or later). Without a lookahead, which not every generator reads.
 */
const NOT_YEAR_ZERO_DATE_TIME = replaceOnce(
  replaceOnce((z.toJSONSchema(z.iso.datetime({ offset: true })) as { pattern: string }).pattern, '|[02468][048]00|', '|(?:[2468][048]|0[48])00|'),
  '|\\d{4}-',
  '|(?:000[1-9]|00[1-9]\\d|0[1-9]\\d{2}|[1-9]\\d{3})-',
);

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
    .meta({ description: 'ISO 8601 date-time with a time zone, between the years 0001 and 9999 (UTC).', pattern: NOT_YEAR_ZERO_DATE_TIME });
}

/**
 * The start of an absolute URL of these schemes (`https?`) that `new URL` reads, for the OpenAPI
 * document beside `format: uri`: the scheme in any case, then a host name whose last label
 * starts with a letter (an IPv4 address is not promised) and an optional port.
 */
export function urlPattern(schemes: 'https' | 'https?'): string {
  const scheme = schemes === 'https' ? '[Hh][Tt][Tt][Pp][Ss]' : '[Hh][Tt][Tt][Pp][Ss]?';
  const port = '(?::(?:[0-9]|[1-9][0-9]{1,3}|[1-5][0-9]{4}|6[0-4][0-9]{3}|65[0-4][0-9]{2}|655[0-2][0-9]|6553[0-5]))?';
  return `^${scheme}://(?:[A-Za-z0-9_-]+\\.)*[A-Za-z][A-Za-z0-9_-]*\\.?${port}(?:[/?#]|$)`;
}

/** An http(s) URL, as `new URL` reads it. */
export const HttpUrl = z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' }).meta({ pattern: urlPattern('https?') });
