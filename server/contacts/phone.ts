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

/**
 * The spec requires the country code ("Must include a valid country code"), so a
 * number without `+` or `00` is refused rather than guessed. An extension cannot
 * be stored in E.164, so it is refused rather than silently dropped.
 */
export function normalisePhoneNumber(input: string): string {
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
