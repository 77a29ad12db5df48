// The input rules as the OpenAPI document states them (server/input-rules.ts): each pattern
// read the way a client's validator reads it, against the values the service accepts and
// refuses, so a document that drifts from the service fails here without a server.
import { describe, expect, test } from 'vitest';
import { z } from 'zod';
import {
  BLANK_TEXT_PATTERN,
  BlankText,
  checkRequestInput,
  columnDateTime,
  findInputProblem,
  HttpUrl,
  NON_BLANK_TEXT_PATTERN,
  NUL_PATTERN,
  urlPattern,
} from '../../server/input-rules.ts';

const matches = (pattern: string, text: string) => new RegExp(pattern, 'u').test(text);

describe('the text patterns', () => {
  test('NUL_PATTERN finds a NUL and nothing else', () => {
    expect(matches(NUL_PATTERN, 'a\u0000b')).toBe(true);
    expect(matches(NUL_PATTERN, 'plain text')).toBe(false);
    expect(matches(NUL_PATTERN, '')).toBe(false);
  });

  test('NON_BLANK_TEXT_PATTERN: something trim() keeps, and no NUL', () => {
    for (const text of ['a', ' a ', '\tHello\n', 'é', '0']) expect(matches(NON_BLANK_TEXT_PATTERN, text), JSON.stringify(text)).toBe(true);
    for (const text of ['', ' ', '\t\n\v\f\r', '\u00a0\u2003\u3000\ufeff\u2028', 'a\u0000', '\u0000']) {
      expect(matches(NON_BLANK_TEXT_PATTERN, text), JSON.stringify(text)).toBe(false);
    }
    // The same judgement as trim().
    for (const text of [' x ', '\u1680', '\u205f', '\u202f y']) expect(matches(NON_BLANK_TEXT_PATTERN, text)).toBe(text.trim() !== '');
  });

  test('BLANK_TEXT_PATTERN and BlankText: empty or white space only', () => {
    for (const text of ['', ' ', '\t\n', '\u00a0\u2000\u200a']) expect(matches(BLANK_TEXT_PATTERN, text), JSON.stringify(text)).toBe(true);
    for (const text of ['a', ' a', '\u0000']) expect(matches(BLANK_TEXT_PATTERN, text), JSON.stringify(text)).toBe(false);
    const schema = z.toJSONSchema(BlankText) as { pattern?: string; description?: string };
    expect(schema.pattern).toBe(BLANK_TEXT_PATTERN);
    expect(schema.description).toMatch(/same as leaving the field out/);
  });
});

describe('URLs', () => {
  test('urlPattern("https") takes https only, in any case, with a host name and an optional port', () => {
    const https = urlPattern('https');
    for (const url of ['https://example.com', 'HTTPS://Example.com/path?q=1', 'https://a.example.com:8443/x', 'https://localhost', 'https://example.com.#f']) {
      expect(matches(https, url), url).toBe(true);
    }
    for (const url of ['http://example.com', 'ftp://example.com', 'https://', 'https://1.2.3.4', 'https://example.com:65536', 'https://example.com:0123', 'xhttps://example.com']) {
      expect(matches(https, url), url).toBe(false);
    }
    expect(matches(https, 'https://example.com:65535/')).toBe(true);
  });

  test('urlPattern("https?") takes http as well', () => {
    const either = urlPattern('https?');
    expect(matches(either, 'http://example.com/')).toBe(true);
    expect(matches(either, 'Http://example.com')).toBe(true);
    expect(matches(either, 'https://example.com')).toBe(true);
    expect(matches(either, 'ws://example.com')).toBe(false);
  });

  test('HttpUrl accepts http and https URLs, refuses others, and states the same pattern', () => {
    expect(HttpUrl.safeParse('https://example.com/a').success).toBe(true);
    expect(HttpUrl.safeParse('http://example.com/a').success).toBe(true);
    for (const url of ['ftp://example.com', 'mailto:a@example.com', 'not a url', 'httpsx://example.com', 'xhttp://example.com']) {
      const parsed = HttpUrl.safeParse(url);
      expect(parsed.success, url).toBe(false);
    }
    expect(HttpUrl.safeParse('ftp://example.com').error?.issues[0]?.message).toBe('must be an http(s) URL');
    expect((z.toJSONSchema(HttpUrl) as { pattern?: string }).pattern).toBe(urlPattern('https?'));
  });
});

describe('date-times', () => {
  const schema = columnDateTime('at must be a date-time');
  const pattern = (z.toJSONSchema(schema) as { pattern: string }).pattern;

  test('the stated pattern takes the years 0001 to 9999 with an offset, as the schema does', () => {
    for (const value of ['2026-11-28T10:00:00Z', '0001-01-01T00:00:00+00:00', '9999-12-31T23:59:59.999Z', '2000-02-29T12:00:00+02:00', '2400-02-29T00:00:00Z', '0400-02-29T00:00:00Z', '0048-02-29T00:00:00Z']) {
      expect(matches(pattern, value), value).toBe(true);
      expect(schema.safeParse(value).success, value).toBe(true);
    }
    for (const value of ['0000-01-01T00:00:00Z', '2026-11-28T10:00:00', '1900-02-29T00:00:00Z', '2100-02-29T00:00:00Z', '0000-02-29T00:00:00Z']) {
      expect(matches(pattern, value), value).toBe(false);
      expect(schema.safeParse(value).success, value).toBe(false);
    }
  });

  test('a refusal is the message given', () => {
    expect(schema.safeParse('yesterday').error?.issues[0]?.message).toBe('at must be a date-time');
  });
});

describe('the refusals name the field and the character', () => {
  test('a NUL and a lone surrogate are named in words', () => {
    expect(findInputProblem({ name: 'a\u0000' })?.message).toBe('name must not contain a NUL character (\\u0000)');
    expect(findInputProblem({ name: 'a\ud800' })?.message).toBe('name must not contain a lone UTF-16 surrogate (\\ud800 to \\udfff without its pair)');
  });

  test('inside arrays, every element is read, first to last', () => {
    expect(findInputProblem({ tags: ['a', 'b\u0000'] })?.message).toBe('tags.1 must not contain a NUL character (\\u0000)');
    expect(findInputProblem({ tags: ['a\u0000', 'b\ud800'] })?.message).toBe('tags.0 must not contain a NUL character (\\u0000)');
    expect(findInputProblem({ tags: [{ x: 'ok' }, { y: '\u0000' }] })?.message).toBe('tags.1.y must not contain a NUL character (\\u0000)');
    expect(findInputProblem({ tags: ['a', 'b', 'c'] })).toBeUndefined();
    expect(() => checkRequestInput([['ok'], ['fine']])).not.toThrow();
  });
});
