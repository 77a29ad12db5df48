// How the chat export writes a message body on one line.
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { bodyOnOneLine } from '../../server/messages/export-chat.ts';

/** The rule as first written; quadratic on long white space, so only fed short bodies here. */
function referenceOneLine(body: string): string {
  return body.replace(/\s*[\r\n]+\s*/g, ' ').trim();
}

const whiteSpaceHeavy = fc
  .array(fc.oneof(fc.constantFrom(' ', '\t', '\n', '\r', '\r\n', '\u00a0', '\u2028', '\v', '\f'), fc.string({ maxLength: 3 })), { maxLength: 40 })
  .map((pieces) => pieces.join(''));

describe('a message body on one line of the chat export', () => {
  test('each run of white space holding a line break becomes one space; other runs stay; the ends are trimmed', () => {
    expect(bodyOnOneLine('Hello,\nI need help.')).toBe('Hello, I need help.');
    expect(bodyOnOneLine('  two  spaces \t stay \r\n\r\n  then one  ')).toBe('two  spaces \t stay then one');
    fc.assert(
      fc.property(whiteSpaceHeavy, (body) => {
        expect(bodyOnOneLine(body)).toBe(referenceOneLine(body));
      }),
      { numRuns: 2000 },
    );
  });

  test('a long run of white space without a line break is kept as it is, and a long mixed run becomes one space', () => {
    // 150,000 spaces before a letter: a backtracking pattern retries the run from each of its
    // positions (about 10^10 steps), which outlasts the test's time-out.
    const spaces = ' '.repeat(150_000);
    const mixed = ' \t\r\n'.repeat(25_000);
    expect(bodyOnOneLine(`a${spaces}b${mixed}c${spaces}`)).toBe(`a${spaces}b c`);
  });
});
