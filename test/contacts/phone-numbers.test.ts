// "phoneNumber: Must include a valid country code": what the OpenAPI document's pattern
// allows is exactly what the service accepts, stored in E.164.
import fc from 'fast-check';
import { expect, test } from 'vitest';
import { normaliseLinkPhoneNumber, normalisePhoneNumber, PHONE_NUMBER_OR_DIGITS_PATTERN, PHONE_NUMBER_PATTERN } from '../../server/contacts/phone.ts';

const E164 = /^\+[1-9][0-9]{1,14}$/;
const PHONE = new RegExp(PHONE_NUMBER_PATTERN, 'u');

function accepted(normalise: (input: string) => string, input: string): string | null {
  try {
    return normalise(input);
  } catch {
    return null;
  }
}

test('every number the pattern allows is accepted and stored in E.164; every other text is refused', () => {
  fc.assert(
    fc.property(fc.stringMatching(PHONE), (input) => {
      const stored = accepted(normalisePhoneNumber, input);
      expect(stored, input).toMatch(E164);
      expect(stored, input).toBe(`+${input.replace(/^ *(?:\+|00)/, '').replace(/[^0-9]/g, '')}`);
    }),
    { numRuns: 2_000 },
  );
  // Near misses: digits, separators and prefixes in any order.
  fc.assert(
    fc.property(fc.string({ unit: fc.constantFrom(...'+0123456789 ().-x\t'.split('')), maxLength: 22 }), (input) => {
      expect(accepted(normalisePhoneNumber, input) !== null, input).toBe(PHONE.test(input));
    }),
    { numRuns: 5_000 },
  );
});

test('a country calling code that does not exist, or a length no number of that country has, is refused', () => {
  for (const input of ['+999 123 456 789', '+0 415 555 2671', '+1 415 555 267', '+1 415 555 26711', '+44', '+12', '+1 123']) {
    expect(accepted(normalisePhoneNumber, input), input).toBeNull();
    expect(PHONE.test(input), input).toBe(false);
  }
  for (const [input, stored] of [['+1 (415) 555-2671', '+14155552671'], ['0044 20 7946 0958', '+442079460958'], [' +33 1 23 45 67 89 ', '+33123456789']]) {
    expect(accepted(normalisePhoneNumber, input!), input).toBe(stored);
  }
});

test('a click-to-chat link also takes the digits alone, as after the +', () => {
  const LINK = new RegExp(PHONE_NUMBER_OR_DIGITS_PATTERN, 'u');
  fc.assert(
    fc.property(fc.string({ unit: fc.constantFrom(...'+0123456789 ().-'.split('')), maxLength: 20 }), (input) => {
      expect(accepted(normaliseLinkPhoneNumber, input) !== null, input).toBe(LINK.test(input));
    }),
    { numRuns: 5_000 },
  );
  expect(normaliseLinkPhoneNumber('14155552671')).toBe('+14155552671');
  expect(normaliseLinkPhoneNumber('0014155552671')).toBe('+14155552671');
});
