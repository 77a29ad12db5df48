// Phone numbers are stored in E.164; input must carry its country code.
import { parsePhoneNumberFromString } from 'libphonenumber-js/max';
import { z } from 'zod';
import { InvalidInputError } from '../errors.ts';

/** `+` or the `00` international prefix, then digits with the usual separators. */
const INTERNATIONAL_FORMAT = /^(?:\+|00)[\d\s().-]+$/;

/**
 * A phone number field of an input. The format is checked by normalisePhoneNumber
 * (its 400 has the endpoint's own shape); the metadata puts the rule in the OpenAPI document.
 */
export const PhoneNumberText = z.string().meta({
  pattern: INTERNATIONAL_FORMAT.source,
  description: 'With its country code: + or 00, then the number (no extension), such as +14155552671.',
});

function invalidPhone(why: string): InvalidInputError {
  return new InvalidInputError(`Invalid phone number: ${why}`, { reason: 'invalid_phone' });
}

/** How many distinct valid inputs normalisePhoneNumber remembers (about 100 bytes each). */
const REMEMBERED_NUMBERS = 20_000;
const normalised = new Map<string, string>();

/**
 * The spec requires the country code ("Must include a valid country code"), so a
 * number without `+` or `00` is refused rather than guessed. An extension cannot
 * be stored in E.164, so it is refused rather than silently dropped.
 *
 * Parsing and validating costs libphonenumber 10 to 25 µs of CPU per call (it builds
 * its patterns again each time), and the same numbers come back again and again
 * (lookups, sends and updates of the same contacts), so the latest valid inputs are
 * remembered, oldest dropped first. The answer depends only on the input, so the
 * memory is this process's own: no other instance needs it.
 */
export function normalisePhoneNumber(input: string): string {
  let number = normalised.get(input);
  if (number === undefined) {
    number = parseValidNumber(input);
    if (normalised.size >= REMEMBERED_NUMBERS) normalised.delete(normalised.keys().next().value!);
    normalised.set(input, number);
  }
  return number;
}

function parseValidNumber(input: string): string {
  const trimmed = input.trim();
  if (!trimmed.startsWith('+') && !trimmed.startsWith('00')) {
    throw invalidPhone('it must start with its country code (+ or 00), such as +14155552671');
  }
  const parsed = parsePhoneNumberFromString(trimmed.startsWith('+') ? trimmed : `+${trimmed.slice(2)}`);
  if (parsed?.ext) throw invalidPhone('extensions are not accepted; send the number without one');
  if (!INTERNATIONAL_FORMAT.test(trimmed) || !parsed || !parsed.isValid()) {
    throw invalidPhone('it must be a valid number with its country code, such as +14155552671');
  }
  return parsed.number;
}
