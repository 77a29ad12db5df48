// Pagination: "only a value received as next_cursor may be passed back", "an invalid cursor
// gives 400". Cursors are signed with the listing and account they belong to.
import { describe, expect, test } from 'vitest';
import { ApiError } from '../../server/errors.ts';
import { DEFAULT_PAGE_SIZE, keysetPage, MAX_PAGE_SIZE, PageInput, readPage, writePage } from '../../server/pagination.ts';
import { createSecrets } from '../../server/secrets.ts';

const secrets = createSecrets(Buffer.from('a-test-master-secret-of-at-least-32-bytes'));
const rows = ['a', 'b', 'c', 'd', 'e'].map((id) => ({ id }));
const keyOf = (row: { id: string }) => row.id;

function invalidCursor(run: () => unknown): void {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).status).toBe(400);
    expect((error as ApiError).message).toBe('Invalid cursor');
    expect((error as ApiError).reason).toBe('invalid_cursor');
    return;
  }
  throw new Error('expected the cursor to be refused');
}

describe('writePage and readPage', () => {
  test('a page of limit + 1 rows has limit items and a cursor that resumes after the last one', () => {
    const page = writePage(secrets, 'contacts:usr_1', rows.slice(0, 3), 2, keyOf);
    expect(page.items).toEqual([{ id: 'a' }, { id: 'b' }]);
    expect(page.next_cursor).toEqual(expect.any(String));
    expect(readPage(secrets, 'contacts:usr_1', { cursor: page.next_cursor! })).toEqual({ limit: DEFAULT_PAGE_SIZE, after: 'b' });
  });

  test('the last page (limit rows or fewer) has next_cursor null', () => {
    expect(writePage(secrets, 's', rows.slice(0, 2), 2, keyOf)).toEqual({ items: rows.slice(0, 2), next_cursor: null });
    expect(writePage(secrets, 's', [], 2, keyOf)).toEqual({ items: [], next_cursor: null });
  });

  test('no cursor reads the first page with the requested or default limit', () => {
    expect(readPage(secrets, 's', {})).toEqual({ limit: DEFAULT_PAGE_SIZE, after: null });
    expect(readPage(secrets, 's', { limit: 7 })).toEqual({ limit: 7, after: null });
    expect(readPage(secrets, 's', {}, 20)).toEqual({ limit: 20, after: null });
    expect(readPage(secrets, 's', { limit: 3 }, 20)).toEqual({ limit: 3, after: null });
  });

  test('a cursor of another listing or account is invalid', () => {
    const cursor = writePage(secrets, 'contacts:usr_1', rows, 2, keyOf).next_cursor!;
    invalidCursor(() => readPage(secrets, 'contacts:usr_2', { cursor }));
    invalidCursor(() => readPage(secrets, 'lists:usr_1', { cursor }));
  });

  test('an edited, truncated or made-up cursor is invalid', () => {
    const cursor = writePage(secrets, 's', rows, 2, keyOf).next_cursor!;
    const [payload, signature] = cursor.split('.') as [string, string];
    const forged = Buffer.from(JSON.stringify({ k: 'z' })).toString('base64url');
    invalidCursor(() => readPage(secrets, 's', { cursor: `${forged}.${signature}` }));
    invalidCursor(() => readPage(secrets, 's', { cursor: payload }));
    invalidCursor(() => readPage(secrets, 's', { cursor: `.${signature}` }));
    invalidCursor(() => readPage(secrets, 's', { cursor: `${payload}.` }));
    invalidCursor(() => readPage(secrets, 's', { cursor: 'not-a-cursor' }));
  });

  test('a correctly signed cursor whose payload is not a key is invalid', () => {
    const sign = (payload: string) => `${payload}.${secrets.sign(`s|${payload}`)}`;
    invalidCursor(() => readPage(secrets, 's', { cursor: sign(Buffer.from('{"k":5}').toString('base64url')) }));
    invalidCursor(() => readPage(secrets, 's', { cursor: sign(Buffer.from('not json').toString('base64url')) }));
    invalidCursor(() => readPage(secrets, 's', { cursor: sign(Buffer.from('null').toString('base64url')) }));
  });
});

test('a keyset page asks for one row more than its limit, after the key of the cursor, and hands the next page its cursor', async () => {
  const asked: [string | null, number][] = [];
  const listing = async (after: string | null, take: number) => {
    asked.push([after, take]);
    return rows.filter((row) => after === null || row.id > after).slice(0, take);
  };
  const first = await keysetPage(secrets, 's', { limit: 2 }, listing);
  expect(first.items).toEqual(rows.slice(0, 2));
  const second = await keysetPage(secrets, 's', { limit: 2, cursor: first.next_cursor! }, listing);
  expect(second.items).toEqual(rows.slice(2, 4));
  const last = await keysetPage(secrets, 's', { limit: 2, cursor: second.next_cursor! }, listing);
  expect(last).toEqual({ items: rows.slice(4), next_cursor: null });
  expect(asked).toEqual([
    [null, 3],
    ['b', 3],
    ['d', 3],
  ]);
});

describe('PageInput', () => {
  test(`limit is a whole number from 1 to ${MAX_PAGE_SIZE}; text is not read as one (the REST adapter reads decimal query text)`, () => {
    expect(PageInput.parse({ limit: 1 })).toEqual({ limit: 1 });
    expect(PageInput.parse({ limit: MAX_PAGE_SIZE })).toEqual({ limit: MAX_PAGE_SIZE });
    expect(PageInput.parse({})).toEqual({});
    const messages = (value: unknown) => PageInput.safeParse({ limit: value }).error?.issues.map((issue) => issue.message);
    expect(messages(0)).toEqual(['limit must be at least 1']);
    expect(messages(MAX_PAGE_SIZE + 1)).toEqual([`limit must be at most ${MAX_PAGE_SIZE}`]);
    expect(messages(1.5)).toEqual(['limit must be a whole number']);
    // What the OpenAPI document's integer does not allow, though Number() would read it.
    for (const text of ['0x10', '1e1', ' 5', '']) expect(messages(text), text).toEqual(['limit must be a whole number']);
  });

  test('an empty cursor is refused', () => {
    expect(PageInput.safeParse({ cursor: '' }).success).toBe(false);
    expect(PageInput.parse({ cursor: 'x' })).toEqual({ cursor: 'x' });
  });
});
