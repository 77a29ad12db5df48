// The input rule every request passes before anything reads it (server/input-rules.ts), on
// its own: text PostgreSQL cannot store and nesting deeper than MAX_INPUT_DEPTH are 400
// naming the field; integer and date-time columns are bounded by their schemas.
// input-rules.test.ts proves the same over /v1 and /trpc.
import { describe, expect, test } from 'vitest';
import { z } from 'zod';
import { ApiError } from '../../server/errors.ts';
import { checkRequestInput, columnDateTime, columnInteger, INT32_MAX, INT32_MIN, MAX_INPUT_DEPTH } from '../../server/input-rules.ts';

function refusal(input: unknown, query?: URLSearchParams): { status: number; message: string; reason: string | undefined } {
  try {
    checkRequestInput(input, query);
  } catch (error) {
    expect(error).toBeInstanceOf(ApiError);
    const apiError = error as ApiError;
    return { status: apiError.status, message: apiError.message, reason: apiError.reason };
  }
  throw new Error('expected the input to be refused');
}

/** An object nested `levels` deep, the input itself being level 1. */
function nested(levels: number): unknown {
  let value: unknown = 1;
  for (let level = 0; level < levels; level += 1) value = { a: value };
  return value;
}

describe('checkRequestInput: NUL characters', () => {
  test('accepts ordinary input of every JSON type', () => {
    expect(() => checkRequestInput({ a: 'text', b: [1, true, null, 'x'], c: { d: 2.5 } }, new URLSearchParams('apiKey=mk_1&limit=5'))).not.toThrow();
    expect(() => checkRequestInput(undefined)).not.toThrow();
    expect(() => checkRequestInput('plain')).not.toThrow();
  });

  test('a NUL in a string names its field by path', () => {
    expect(refusal({ contact: { names: ['ok', 'b\u0000d'] } })).toEqual({
      status: 400,
      message: 'contact.names.1 must not contain a NUL character (\\u0000)',
      reason: 'nul_character',
    });
    expect(refusal('a\u0000').message).toBe('body must not contain a NUL character (\\u0000)');
  });

  test('a NUL in an object key names the object holding it', () => {
    expect(refusal({ settings: { 'x\u0000': 1 } }).message).toBe('A field name in settings must not contain a NUL character (\\u0000)');
    expect(refusal({ 'x\u0000': 1 }).message).toBe('A field name in body must not contain a NUL character (\\u0000)');
  });

  test('a NUL in a query parameter name or value is refused, credentials included', () => {
    expect(refusal({}, new URLSearchParams({ apiKey: 'mk_\u0000' })).message).toBe('apiKey must not contain a NUL character (\\u0000)');
    expect(refusal({}, new URLSearchParams({ 'user\u0000Id': 'x' })).message).toBe('A query parameter name must not contain a NUL character (\\u0000)');
  });
});

describe(`checkRequestInput: at most ${MAX_INPUT_DEPTH} levels`, () => {
  test(`${MAX_INPUT_DEPTH} levels pass, one more is refused naming the top-level field`, () => {
    expect(() => checkRequestInput(nested(MAX_INPUT_DEPTH))).not.toThrow();
    expect(() => checkRequestInput({ top: nested(MAX_INPUT_DEPTH - 1) })).not.toThrow();
    expect(refusal(nested(MAX_INPUT_DEPTH + 1)).reason).toBe('too_deep');
    expect(refusal({ top: nested(MAX_INPUT_DEPTH) })).toEqual({
      status: 400,
      message: `top nests objects or arrays deeper than ${MAX_INPUT_DEPTH} levels`,
      reason: 'too_deep',
    });
  });

  test('arrays count as levels too, and a very deep input is refused without overflowing the stack', () => {
    let deepArray: unknown = [];
    for (let level = 1; level < MAX_INPUT_DEPTH; level += 1) deepArray = [deepArray];
    expect(() => checkRequestInput(deepArray)).not.toThrow();
    expect(refusal([deepArray]).reason).toBe('too_deep');
    expect(refusal(nested(5000)).reason).toBe('too_deep');
  });

  test('every member of an array is checked, not only the first or last', () => {
    expect(refusal({ list: ['a', 'b\u0000', 'c'] }).message).toBe('list.1 must not contain a NUL character (\\u0000)');
    expect(refusal({ list: ['a\u0000', 'b'] }).message).toBe('list.0 must not contain a NUL character (\\u0000)');
  });
});

describe('columnInteger', () => {
  test('a PostgreSQL integer, with messages naming the field', () => {
    const schema = columnInteger('credits');
    expect(schema.parse(INT32_MAX)).toBe(INT32_MAX);
    expect(schema.parse(INT32_MIN)).toBe(INT32_MIN);
    expect(schema.safeParse(INT32_MAX + 1).error?.issues[0]?.message).toBe(`credits must be at most ${INT32_MAX}`);
    expect(schema.safeParse(INT32_MIN - 1).error?.issues[0]?.message).toBe(`credits must be at least ${INT32_MIN}`);
    expect(schema.safeParse(1.5).error?.issues[0]?.message).toBe('credits must be a whole number');
    expect(columnInteger().safeParse(1.5).error?.issues[0]?.message).toBe('must be a whole number');
  });
});

describe('columnDateTime', () => {
  const schema = columnDateTime('due_at must be an ISO 8601 date-time');
  test('the OpenAPI document states the range', () => {
    expect(z.toJSONSchema(schema)).toMatchObject({ type: 'string', format: 'date-time', description: 'ISO 8601 date-time with a time zone, between the years 0001 and 9999 (UTC).' });
  });
  test('an ISO 8601 date-time with a zone, years 0001 to 9999', () => {
    expect(schema.parse('2026-11-25T10:00:00Z')).toBe('2026-11-25T10:00:00Z');
    expect(schema.parse('0001-01-01T00:00:00Z')).toBe('0001-01-01T00:00:00Z');
    expect(schema.parse('9999-12-31T23:59:59+00:00')).toBe('9999-12-31T23:59:59+00:00');
    for (const value of ['2026-11-25', '2026-11-25T10:00:00', '0000-01-01T00:00:00Z', '9999-12-31T23:59:59-01:00']) {
      expect(schema.safeParse(value).error?.issues[0]?.message).toBe('due_at must be an ISO 8601 date-time');
    }
  });
});
