// Keyset pagination with opaque, tamper-proof cursors. A cursor names the last
// id of a page and is signed together with the listing and account it belongs
// to, so it cannot be edited or replayed against another listing or account.
import type { EntityClass, FilterQuery } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { InvalidInputError } from './errors.ts';
import type { Secrets } from './secrets.ts';

export const DEFAULT_PAGE_SIZE = 50;
export const MAX_PAGE_SIZE = 100;

export const PageInput = z.object({
  // Not coerced: the REST adapter reads a decimal number from the query string, and
  // anything else (`0x10`, `1e1`) is not the integer the OpenAPI document asks for.
  limit: z
    .number({ error: 'limit must be a whole number' })
    .int('limit must be a whole number')
    .min(1, 'limit must be at least 1')
    .max(MAX_PAGE_SIZE, `limit must be at most ${MAX_PAGE_SIZE}`)
    .optional(),
  cursor: z.string().min(1).optional(),
});
export type PageInput = z.infer<typeof PageInput>;

export type PageRequest = { limit: number; after: string | null };

/** The refusal of a cursor that is not one this listing signed (for a listing that reads its key further). */
export function invalidCursor(): InvalidInputError {
  return new InvalidInputError('Invalid cursor', { reason: 'invalid_cursor' });
}

/** `scope` names the listing and the account, e.g. `contacts:usr_…`. */
export function readPage(secrets: Secrets, scope: string, input: PageInput, defaultLimit = DEFAULT_PAGE_SIZE): PageRequest {
  const limit = input.limit ?? defaultLimit;
  if (!input.cursor) return { limit, after: null };
  const [payload, signature] = input.cursor.split('.');
  if (!payload || !signature || !secrets.verify(`${scope}|${payload}`, signature)) throw invalidCursor();
  try {
    const decoded = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as { k?: unknown };
    if (typeof decoded.k !== 'string') throw invalidCursor();
    return { limit, after: decoded.k };
  } catch {
    throw invalidCursor();
  }
}

/** Given up to `limit + 1` rows in order, the page and the cursor for the next one. */
export function writePage<T>(
  secrets: Secrets,
  scope: string,
  rows: T[],
  limit: number,
  keyOf: (row: T) => string,
): { items: T[]; next_cursor: string | null } {
  if (rows.length <= limit) return { items: rows, next_cursor: null };
  const items = rows.slice(0, limit);
  const payload = Buffer.from(JSON.stringify({ k: keyOf(items[items.length - 1]) })).toString('base64url');
  return { items, next_cursor: `${payload}.${secrets.sign(`${scope}|${payload}`)}` };
}

export type Page<T> = { items: T[]; next_cursor: string | null };

/**
 * One keyset page: reads the cursor, asks `fetchRows` for up to `take` rows after its key
 * (in the listing's order), and signs the cursor of the next page. The key is the row's id
 * unless `keyOf` says otherwise (a listing ordered by another column keys by it and the id).
 */
export async function keysetPage<T extends { id: string }>(
  secrets: Secrets,
  scope: string,
  input: PageInput,
  fetchRows: (after: string | null, take: number) => Promise<T[]>,
  keyOf: (row: T) => string = (row) => row.id,
): Promise<Page<T>> {
  const page = readPage(secrets, scope, input);
  const rows = await fetchRows(page.after, page.limit + 1);
  return writePage(secrets, scope, rows, page.limit, keyOf);
}

/** The entities matching `where`, oldest id first, a keyset page at a time. */
export function findEntityPage<T extends { id: string }>(
  em: EntityManager,
  entity: EntityClass<T>,
  where: FilterQuery<T>,
  secrets: Secrets,
  scope: string,
  input: PageInput,
): Promise<Page<T>> {
  return keysetPage(secrets, scope, input, (after, take) =>
    em.find(entity, { ...(where as object), ...(after ? { id: { $gt: after } } : {}) } as FilterQuery<T>, {
      orderBy: { id: 'asc' } as never,
      limit: take,
    }),
  );
}
