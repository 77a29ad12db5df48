// How the chat export writes a message body on one line.
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { bodyOnOneLine, EXPORT_TEXT_LIMIT, formatChatExport, omittedMessagesLine } from '../../server/messages/export-chat.ts';

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

describe('the export text', () => {
  const at = new Date('2026-01-02T03:04:05.678Z');

  test('says how many earlier messages it leaves out, in words', () => {
    expect(omittedMessagesLine(1)).toBe('… 1 earlier message not included');
    expect(omittedMessagesLine(1234)).toBe('… 1,234 earlier messages not included');
    const shown = [{ createdAt: at, direction: 'inbound' as const, sender: null, body: 'hi' }];
    expect(formatChatExport(shown, 1)).toBe('[2026-01-02T03:04:05.678Z] Inbound (contact): hi');
    expect(formatChatExport(shown, 3)).toBe('… 2 earlier messages not included\n[2026-01-02T03:04:05.678Z] Inbound (contact): hi');
  });

  test('a newest message longer than the whole text limit is cut to fit, under the line counting the others', () => {
    const body = 'y'.repeat(EXPORT_TEXT_LIMIT + 10);
    const older = { createdAt: at, direction: 'outbound' as const, sender: null, body: 'short' };
    const newest = { createdAt: at, direction: 'inbound' as const, sender: null, body };
    const text = formatChatExport([older, newest], 3);
    expect(text).toHaveLength(EXPORT_TEXT_LIMIT);
    const [header, line, ...rest] = text.split('\n');
    expect(header).toBe('… 2 earlier messages not included');
    expect(line!.startsWith('[2026-01-02T03:04:05.678Z] Inbound (contact): yyy')).toBe(true);
    expect(rest).toEqual([]);
    expect(formatChatExport([newest], 1)).toHaveLength(EXPORT_TEXT_LIMIT);
  });
});
