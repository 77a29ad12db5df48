// The one raw-SQL style: composed statements with numbered parameters, run alike on the
// pool, on a pool client, and inside an ORM transaction (where its rows roll back with it).
import { UniqueConstraintViolationException, type MikroORM } from '@mikro-orm/postgresql';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { newId } from '../../server/db/ids.ts';
import { openOrm, pgPool } from '../../server/db/orm.ts';
import { joinSql, oneStatement, prepared, queryRows, rawSql, runSql, sql, stringLiteral } from '../../server/db/sql.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';

const LITERAL_TEXTS = ['', 'plain', "it's", "''", 'a\\b', "both ' and \\ here", '\\', "\\'", 'ünïcödé ✓ \u{1F600}', JSON.stringify({ body: 'say "hi" \\ it\'s\n' })];

describe('sql tagged template', () => {
  test('values become $n placeholders; an interpolated fragment is inlined with its placeholders renumbered', () => {
    const inner = sql`b = ${2} and c = ${3}`;
    const outer = sql`select 1 where a = ${1} and ${inner} and d = ${4}`;
    expect(outer.statement()).toEqual({ text: 'select 1 where a = $1 and b = $2 and c = $3 and d = $4', values: [1, 2, 3, 4] });
    expect(joinSql([sql`(${'x'})`, sql`(${'y'})`]).statement()).toEqual({ text: '($1), ($2)', values: ['x', 'y'] });
    expect(sql`${rawSql('now()')}`.statement()).toEqual({ text: 'now()', values: [] });
  });

  test('oneStatement puts writes in a WITH and calls in the select list', () => {
    const statement = oneStatement({ writes: [sql`insert into t values (${1})`], calls: [sql`f(${2})`, sql`g()`] }).statement();
    expect(statement).toEqual({ text: 'with w1 as (insert into t values ($1))\nselect f($2), g()', values: [1, 2] });
  });

  test("stringLiteral writes pg's escapeLiteral's literal: quotes doubled, backslashes doubled in an E'' literal", () => {
    for (const text of LITERAL_TEXTS) expect(stringLiteral(text)).toBe(pg.escapeLiteral(text));
  });

  test('a prepared statement is named by its label and text: one name per text', () => {
    const a = prepared('count', sql`select ${1}::int`);
    expect(a.name).toMatch(/^count-/);
    expect(prepared('count', sql`select ${2}::int`).name).toBe(a.name);
    expect(prepared('count', sql`select ${2}::int + 1`).name).not.toBe(a.name);
  });
});

describe('statement shapes', () => {
  const byId = (id: string) => sql`select ${id}::text as id`;
  const either = (flag: boolean) => (flag ? sql`a = ${1}` : sql`b = ${2} and c = ${3}`);

  test('one composition renders one text whatever its values; another composition another text', () => {
    const outer = (flag: boolean, value: string) => sql`select ${value} where ${either(flag)} and x in (${joinSql([byId(value), byId('z')])})`;
    const first = outer(true, 'p');
    const again = outer(true, 'q');
    expect(again.shape).toBe(first.shape);
    expect(again.statement()).toEqual({ text: first.text, values: ['q', 1, 'q', 'z'] });
    const other = outer(false, 'p');
    expect(other.shape).not.toBe(first.shape);
    expect(other.statement()).toEqual({
      text: 'select $1 where b = $2 and c = $3 and x in (select $4::text as id, select $5::text as id)',
      values: ['p', 2, 3, 'p', 'z'],
    });
    expect(first.text).toBe('select $1 where a = $2 and x in (select $3::text as id, select $4::text as id)');
  });

  test('raw text and joins are told apart by their content', () => {
    expect(sql`select ${rawSql('a')}`.text).toBe('select a');
    expect(sql`select ${rawSql('b')}`.text).toBe('select b');
    expect(joinSql([byId('1'), byId('2')], ' union ').text).toBe('select $1::text as id union select $2::text as id');
    expect(joinSql([byId('1'), byId('2'), byId('3')]).text).toBe('select $1::text as id, select $2::text as id, select $3::text as id');
    const prefixed = prepared('by-id', byId('1'));
    expect(prepared('by-id', byId('2'))).toEqual({ ...prefixed, values: ['2'] });
  });
});

describe('runSql', () => {
  let database: TestDatabase;
  let orm: MikroORM;
  let pool: pg.Pool;

  beforeAll(async () => {
    database = await createTestDatabase();
    orm = await openOrm(database.url);
    pool = pgPool(orm);
  });
  afterAll(async () => {
    await orm?.close();
    await database?.drop();
  });

  test('runs on the pool, a client and the ORM alike, with the same rows', async () => {
    const query = sql`select ${'a'}::text as letter, ${41}::int + 1 as answer`;
    const expected = [{ letter: 'a', answer: 42 }];
    expect(await queryRows(pool, prepared('letter-answer', query))).toEqual(expected);
    const client = await pool.connect();
    try {
      expect(await queryRows(client, query)).toEqual(expected);
    } finally {
      client.release();
    }
    expect(await queryRows(orm.em.fork(), query)).toEqual(expected);
  });

  test('a stringLiteral in plain SQL text reads back as the text it quotes', async () => {
    for (const text of LITERAL_TEXTS) {
      const { rows } = await pool.query<{ text: string }>(`select ${stringLiteral(text)}::text as text`);
      expect(rows[0]!.text).toBe(text);
    }
  });

  test("inside an ORM transaction it is part of it: rolled back with it; a constraint error is the ORM's exception", async () => {
    const id = newId('usr');
    const insert = sql`insert into accounts (id, email) values (${id}, ${`${id}@example.com`})`;
    await expect(
      orm.em.fork().transactional(async (tx) => {
        expect((await runSql(tx, insert)).rowCount).toBe(1);
        expect(await queryRows(tx, sql`select id from accounts where id = ${id}`)).toEqual([{ id }]);
        throw new Error('roll back');
      }),
    ).rejects.toThrow('roll back');
    expect(await queryRows(pool, sql`select id from accounts where id = ${id}`)).toEqual([]);

    await runSql(pool, insert);
    await expect(orm.em.fork().transactional((tx) => runSql(tx, insert))).rejects.toBeInstanceOf(UniqueConstraintViolationException);
  });
});
