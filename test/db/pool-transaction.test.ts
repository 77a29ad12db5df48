// A pool transaction's first statements sent with its BEGIN and its last with its COMMIT,
// each in one round trip: each statement still runs after the one before, a failure of the
// last rolls everything back and runs nothing after the commit, and the connection goes
// back to the pool usable (or is discarded after a failure).
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { openPoolTransaction } from '../../server/db/pool-transaction.ts';
import { queryPipelined } from '../../server/db/pipelined-queries.ts';
import { prepared, sql } from '../../server/db/sql.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';

let database: TestDatabase;
let pool: pg.Pool;

beforeAll(async () => {
  database = await createTestDatabase();
  pool = new pg.Pool({ connectionString: database.url, max: 2 });
  // A connection discarded after a failure ends in the background (the pool does not wait for
  // it in end()), so dropping the database may cut it first; the pool then reports an error,
  // as the service's pool does to its log (MikroORM listens there).
  pool.on('error', () => {});
  await pool.query('create table pipelined (id int primary key, note text)');
  await pool.query('create table announced (id int)');
});

afterAll(async () => {
  await pool?.end();
  await database?.drop();
});

const insert = (id: number, note: string) => prepared('pipelined-insert', sql`insert into pipelined (id, note) values (${id}::int, ${note}::text) returning id`);
const ids = async () => (await pool.query<{ id: number }>('select id from pipelined order by id')).rows.map((row) => row.id);
const announcedIds = async () => (await pool.query<{ id: number }>('select id from announced order by id')).rows.map((row) => row.id);

describe('pipelined pool transactions', () => {
  test('the statements sent with BEGIN run in order inside the transaction, and their results come back in order', async () => {
    const transaction = await openPoolTransaction(pool, { with: [insert(1, 'a'), prepared('pipelined-read', sql`select count(*)::int as n from pipelined where id = ${1}::int`)] });
    expect(transaction.opened.map((result) => result.rows)).toEqual([[{ id: 1 }], [{ n: 1 }]]);
    // Not committed yet: another connection does not see it.
    expect(await ids()).toEqual([]);
    const last = await transaction.commitWith(insert(2, 'b'), 'insert into announced values (2)');
    expect(last.rows).toEqual([{ id: 2 }]);
    expect(await ids()).toEqual([1, 2]);
    expect(await announcedIds()).toEqual([2]);
  });

  test('a failed last statement rolls the transaction back, and what was to run after the commit does not run', async () => {
    const transaction = await openPoolTransaction(pool, { with: [insert(3, 'c')] });
    await expect(transaction.commitWith(insert(1, 'duplicate'), 'insert into announced values (3)')).rejects.toThrow(/duplicate key/);
    expect(await ids()).toEqual([1, 2]);
    expect(await announcedIds()).toEqual([2]);
    // The pool still serves.
    expect((await pool.query('select 1 as one')).rows).toEqual([{ one: 1 }]);
  });

  test('a failed statement sent with BEGIN fails the opening, rolled back', async () => {
    await expect(openPoolTransaction(pool, { with: [insert(4, 'd'), insert(1, 'duplicate'), insert(5, 'e')] })).rejects.toThrow(/duplicate key/);
    expect(await ids()).toEqual([1, 2]);
  });

  test('a connection used pipelined answers one statement at a time afterwards', async () => {
    const client = await pool.connect();
    try {
      const results = await queryPipelined(client, ['select 1 as a', prepared('pipelined-two', sql`select ${2}::int as b`)]);
      expect(results.map((result) => result.rows)).toEqual([[{ a: 1 }], [{ b: 2 }]]);
      expect((await client.query('select 3 as c')).rows).toEqual([{ c: 3 }]);
      expect((await client.query(prepared('pipelined-two', sql`select ${4}::int as b`))).rows).toEqual([{ b: 4 }]);
    } finally {
      client.release();
    }
  });

  test("a pipelined batch reaches the server in one write to the connection's socket", async () => {
    const client = await pool.connect();
    // Counted where the socket hands data to the system: a write of one buffer, or of several at once.
    const socket = (client as unknown as { connection: { stream: { _write: Function; _writev: Function } } }).connection.stream;
    const [write, writev] = [socket._write, socket._writev];
    let writes = 0;
    socket._write = function (this: unknown, ...args: unknown[]) {
      writes += 1;
      return write.apply(this, args);
    };
    socket._writev = function (this: unknown, ...args: unknown[]) {
      writes += 1;
      return writev.apply(this, args);
    };
    try {
      const results = await queryPipelined(client, [
        'begin',
        prepared('pipelined-three', sql`select ${3}::int as c`),
        prepared('pipelined-three', sql`select ${4}::int as c`),
        'commit',
      ]);
      expect(results.map((result) => result.rows)).toEqual([[], [{ c: 3 }], [{ c: 4 }], []]);
      expect(writes).toBe(1);
    } finally {
      [socket._write, socket._writev] = [write, writev];
      client.release();
    }
  });
});
