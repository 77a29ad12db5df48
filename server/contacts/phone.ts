// Phone numbers are stored in E.164; input must carry its country code. What is accepted
// is exactly what one regular expression says, built from libphonenumber's metadata, so
// the OpenAPI document can state it as the field's pattern.
import { parsePhoneNumberFromString } from 'libphonenumber-js/max';
import metadata from 'libphonenumber-js/metadata.max';
import { z } from 'zod';
import { InvalidInputError } from '../errors.ts';
import { BlankText } from '../input-rules.ts';

/** E.164: a number has at most 15 digits, its country calling code included. */
const E164_MAX_DIGITS = 15;
/** What may stand between the digits: `+1 (415) 555-2671`, `+44.20.7946.0958`. */
const SEPARATORS = '[ ().-]*';

type PhoneMetadata = {
  country_calling_codes: Record<string, string[]>;
  countries: Record<string, unknown[]>;
  nonGeographic?: Record<string, unknown[]>;
};

/** Every country calling code with the lengths its national numbers may have (libphonenumber's possible lengths). */
function nationalLengths(): Map<string, number[]> {
  const { country_calling_codes: codes, countries, nonGeographic } = metadata as unknown as PhoneMetadata;
  const lengths = new Map<string, number[]>();
  for (const [code, regions] of Object.entries(codes)) {
    const plans = [...regions.map((region) => countries[region]), nonGeographic?.[code]];
    const possible = new Set(plans.flatMap((plan) => (Array.isArray(plan?.[3]) ? (plan[3] as number[]) : [])));
    lengths.set(code, [...possible].filter((length) => code.length + length <= E164_MAX_DIGITS).sort((a, b) => a - b));
  }
  return lengths;
}

/** `count` digits, each after optional separators; several counts as runs (`{7}`, `{9,10}`). */
function digitsPattern(counts: number[]): string {
  const runs: [number, number][] = [];
  for (const count of counts) {
    const last = runs[runs.length - 1];
    if (last && last[1] === count - 1) last[1] = count;
    else runs.push([count, count]);
  }
  const alternatives = runs.map(([low, high]) => `(?:${SEPARATORS}[0-9]){${low === high ? low : `${low},${high}`}}`);
  return alternatives.length === 1 ? alternatives[0]! : `(?:${alternatives.join('|')})`;
}

/** The country calling codes as a trie of alternatives (codes are prefix-free), each followed by its national digits. */
function codesPattern(codes: Map<string, number[]>, prefix = ''): string {
  const own = codes.get(prefix);
  if (own) return digitsPattern(own);
  const next = new Set([...codes.keys()].filter((code) => code.startsWith(prefix) && code.length > prefix.length).map((code) => code[prefix.length]!));
  const branches = [...next].sort().map((digit) => `${digit}${codesPattern(codes, prefix + digit)}`);
  return branches.length === 1 ? branches[0]! : `(?:${branches.join('|')})`;
}

const CODES = codesPattern(new Map([...nationalLengths()].filter(([, lengths]) => lengths.length > 0)));

/**
 * A phone number with its country code: `+` or the international prefix `00`, a country
 * calling code, then as many digits as that country's numbers have, with spaces, brackets,
 * dots and dashes allowed between them.
 */
export const PHONE_NUMBER_PATTERN = `^ *(?:\\+|00)${SEPARATORS}${CODES}${SEPARATORS}$`;
/** The same, where the digits alone are also taken as after a `+` (the click-to-chat link). */
export const PHONE_NUMBER_OR_DIGITS_PATTERN = `^ *(?:\\+|00)?${SEPARATORS}${CODES}${SEPARATORS}$`;

const PHONE_NUMBER = new RegExp(PHONE_NUMBER_PATTERN);
const PHONE_NUMBER_OR_DIGITS = new RegExp(PHONE_NUMBER_OR_DIGITS_PATTERN);

/**
 * A phone number field of an input. The format is checked by normalisePhoneNumber
 * (its 400 has the endpoint's own shape); the metadata puts the rule in the OpenAPI document.
 */
export const PhoneNumberText = z.string().meta({
  pattern: PHONE_NUMBER_PATTERN,
  description:
    'With its country code: + or 00, the country calling code, then the number (no extension) with as many digits as ' +
    "that country's numbers have; spaces, brackets, dots and dashes may separate the digits. Such as +14155552671.",
});

/** A phone number field where blank is the same as absent (lookups by phone number or e-mail). */
export const PhoneNumberOrBlank = z.union([PhoneNumberText, BlankText]);

function invalidPhone(why: string): InvalidInputError {
  return new InvalidInputError(`Invalid phone number: ${why}`, { reason: 'invalid_phone' });
}

/** Why a number is refused, in the words that help most. */
function refusal(input: string): InvalidInputError {
  const trimmed = input.trim();
  if (!trimmed.startsWith('+') && !trimmed.startsWith('00')) {
    return invalidPhone('it must start with its country code (+ or 00), such as +14155552671');
  }
  if (parsePhoneNumberFromString(trimmed.startsWith('+') ? trimmed : `+${trimmed.slice(2)}`)?.ext) {
    return invalidPhone('extensions are not accepted; send the number without one');
  }
  return invalidPhone('it must be a valid number with its country code, such as +14155552671');
}

/** E.164 (`+` and the digits) of a number PHONE_NUMBER_OR_DIGITS matched. */
function toE164(input: string): string {
  const digits = input.replace(/[^0-9+]/g, '');
  return `+${digits.startsWith('+') ? digits.slice(1) : digits.startsWith('00') ? digits.slice(2) : digits}`;
}

/**
 * The spec requires the country code ("Must include a valid country code"), so a number
 * without `+` or `00` is refused rather than guessed, as is one whose length no number of
 * that country has. An extension cannot be stored in E.164, so it is refused rather than
 * silently dropped.
 */
export function normalisePhoneNumber(input: string): string {
  if (!PHONE_NUMBER.test(input)) throw refusal(input);
  return toE164(input);
}

/** A click-to-chat link's number: with its country code, or the digits alone taken as after the `+`. */
export function normaliseLinkPhoneNumber(input: string): string {
  if (!PHONE_NUMBER_OR_DIGITS.test(input)) throw refusal(input);
  return toE164(input);
}
