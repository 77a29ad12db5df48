// Phone numbers are stored in E.164; input must carry its country code.
import { parsePhoneNumberFromString } from 'libphonenumber-js/max';
import { InvalidInputError } from '../errors.ts';

export function normalisePhoneNumber(input: string): string {
  const trimmed = input.trim();
  const withPlus = trimmed.startsWith('+') ? trimmed : trimmed.startsWith('00') ? `+${trimmed.slice(2)}` : `+${trimmed}`;
  const parsed = parsePhoneNumberFromString(withPlus);
  if (!parsed || !parsed.isValid()) {
    throw new InvalidInputError('Invalid phone number: it must be a valid number with its country code, such as +14155552671', {
      reason: 'invalid_phone',
    });
  }
  return parsed.number;
}
