// Ids: a prefix, then 26 Crockford base32 characters that sort as the ids were made.
import { describe, expect, test } from 'vitest';
import { newId } from '../../server/db/ids.ts';

describe('newId', () => {
  test('prefix, underscore, then 10 time and 16 random characters of Crockford base32', () => {
    const before = Date.now();
    const id = newId('msg');
    expect(id).toMatch(/^msg_[0-9a-hjkmnp-tv-z]{26}$/);
    // The first ten characters are the millisecond the id was made.
    const time = [...id.slice(4, 14)].reduce((value, char) => value * 32 + '0123456789abcdefghjkmnpqrstvwxyz'.indexOf(char), 0);
    expect(time).toBeGreaterThanOrEqual(before);
    expect(time).toBeLessThanOrEqual(Date.now());
  });

  test('ids made one after another sort in that order as plain strings, within one millisecond too', () => {
    const ids = Array.from({ length: 20_000 }, () => newId('evt'));
    expect(new Set(ids).size).toBe(ids.length);
    expect([...ids].sort()).toEqual(ids);
  });
});
