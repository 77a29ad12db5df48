// The schema stays distributable by account (Citus's multi-tenant rule): every table of
// schema public either says in its catalog comment why it is not distributed, or has a
// tenant column (`account_id`; `id` for accounts) that its primary key, every unique
// index and every foreign key to another tenant table include. Read from the catalog of a
// migrated database, so a new table or key that breaks the rule fails here.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';

const NOT_DISTRIBUTED = 'not distributed: ';
/** Tables no rule applies to: the migration tool's own bookkeeping. */
const IGNORED = new Set(['mikro_orm_migrations']);

type Table = { name: string; comment: string | null; columns: string[] };
type UniqueIndex = { table: string; name: string; columns: string[]; primary: boolean };
type ForeignKey = {
  table: string;
  name: string;
  columns: string[];
  target: string;
  targetColumns: string[];
  onDelete: string;
  onUpdate: string;
  setColumns: string[] | null;
};

describe('schema distributable by account', () => {
  let database: TestDatabase;
  let client: pg.Client;
  let tables: Map<string, Table>;
  let uniques: UniqueIndex[];
  let foreignKeys: ForeignKey[];

  beforeAll(async () => {
    database = await createTestDatabase();
    client = new pg.Client({ connectionString: database.url });
    await client.connect();
    const tableRows = await client.query<Table>(`
      select c.relname as name, obj_description(c.oid, 'pg_class') as comment,
             array(select a.attname::text from pg_attribute a where a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped order by a.attnum) as columns
      from pg_class c join pg_namespace n on n.oid = c.relnamespace
      where n.nspname = 'public' and c.relkind in ('r', 'p')`);
    tables = new Map(tableRows.rows.filter((t) => !IGNORED.has(t.name)).map((t) => [t.name, t]));
    // Unique indexes rather than constraints: a unique index (partial or not) binds Citus alike.
    uniques = (
      await client.query<UniqueIndex>(`
      select t.relname as table, i.relname as name, x.indisprimary as primary,
             array(select a.attname::text from unnest(x.indkey) k join pg_attribute a on a.attrelid = t.oid and a.attnum = k) as columns
      from pg_index x join pg_class i on i.oid = x.indexrelid join pg_class t on t.oid = x.indrelid
      join pg_namespace n on n.oid = t.relnamespace
      where n.nspname = 'public' and x.indisunique`)
    ).rows;
    foreignKeys = (
      await client.query<ForeignKey>(`
      select t.relname as table, co.conname as name, r.relname as target,
             array(select a.attname::text from unnest(co.conkey) with ordinality k(n, i) join pg_attribute a on a.attrelid = co.conrelid and a.attnum = k.n order by k.i) as columns,
             array(select a.attname::text from unnest(co.confkey) with ordinality k(n, i) join pg_attribute a on a.attrelid = co.confrelid and a.attnum = k.n order by k.i) as "targetColumns",
             co.confdeltype as "onDelete", co.confupdtype as "onUpdate",
             case when co.confdelsetcols is null then null else
               array(select a.attname::text from unnest(co.confdelsetcols) k join pg_attribute a on a.attrelid = co.conrelid and a.attnum = k) end as "setColumns"
      from pg_constraint co join pg_class t on t.oid = co.conrelid join pg_class r on r.oid = co.confrelid
      join pg_namespace n on n.oid = t.relnamespace
      where n.nspname = 'public' and co.contype = 'f'`)
    ).rows;
  });

  afterAll(async () => {
    await client?.end();
    await database?.drop();
  });

  const distributed = () => [...tables.values()].filter((t) => !t.comment?.startsWith(NOT_DISTRIBUTED));
  const tenantColumn = (table: string) => (table === 'accounts' ? 'id' : 'account_id');
  const isDistributed = (table: string) => distributed().some((t) => t.name === table);
  const isReference = (table: string) => Boolean(tables.get(table)?.comment?.includes('reference table'));

  it('finds the tables it checks', () => {
    expect(tables.has('contacts')).toBe(true);
    expect(distributed().length).toBeGreaterThan(10);
  });

  it('gives every distributed table a tenant column', () => {
    const missing = distributed().filter((t) => !t.columns.includes(tenantColumn(t.name))).map((t) => t.name);
    expect(missing).toEqual([]);
  });

  it('includes the tenant column in every primary key and unique index of a distributed table', () => {
    const withoutPrimary = distributed().filter((t) => !uniques.some((u) => u.table === t.name && u.primary)).map((t) => t.name);
    expect(withoutPrimary).toEqual([]);
    const breaking = uniques
      .filter((u) => isDistributed(u.table) && !u.columns.includes(tenantColumn(u.table)))
      .map((u) => `${u.table}.${u.name} (${u.columns.join(', ')})`);
    expect(breaking).toEqual([]);
  });

  it('includes the tenant column on both sides of every foreign key between distributed tables', () => {
    const breaking = foreignKeys
      .filter((fk) => isDistributed(fk.table) && isDistributed(fk.target))
      .filter((fk) => {
        const at = fk.columns.indexOf(tenantColumn(fk.table));
        return at < 0 || fk.targetColumns[at] !== tenantColumn(fk.target);
      })
      .map((fk) => `${fk.table}.${fk.name} (${fk.columns.join(', ')}) -> ${fk.target} (${fk.targetColumns.join(', ')})`);
    expect(breaking).toEqual([]);
  });

  it('uses on those keys only the actions a distributed table accepts', () => {
    // Citus refuses SET NULL / SET DEFAULT on delete and any action but NO ACTION / RESTRICT
    // on update when the key holds the tenant column ('a' no action, 'r' restrict, 'c' cascade).
    const breaking = foreignKeys
      .filter((fk) => isDistributed(fk.table) && isDistributed(fk.target))
      .filter((fk) => !['a', 'r', 'c'].includes(fk.onDelete) || !['a', 'r'].includes(fk.onUpdate))
      .map((fk) => `${fk.table}.${fk.name} on delete ${fk.onDelete} on update ${fk.onUpdate}`);
    expect(breaking).toEqual([]);
  });

  it('lets a distributed table reference only distributed or reference tables, and a reference table reference no distributed one', () => {
    const breaking = foreignKeys
      .filter((fk) => fk.table !== fk.target)
      .filter((fk) => (isDistributed(fk.table) ? !isDistributed(fk.target) && !isReference(fk.target) : isDistributed(fk.target)))
      .map((fk) => `${fk.table}.${fk.name} -> ${fk.target}`);
    expect(breaking).toEqual([]);
  });
});
