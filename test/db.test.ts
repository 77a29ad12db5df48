import type { MikroORM } from '@mikro-orm/postgresql';
import { Logger, runOnce } from 'graphile-worker';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Account, Contact } from '../server/db/entities/index.ts';
import { newId } from '../server/db/ids.ts';
import { migrate, openOrm, pgPool } from '../server/db/orm.ts';
import { createTestDatabase, type TestDatabase } from './helpers/database.ts';

const TABLES = [
  'accounts',
  'api_keys',
  'rate_counters',
  'lists',
  'contacts',
  'contact_lists',
  'tags',
  'contact_tags',
  'chat_sessions',
  'messages',
  'summaries',
  'tasks',
  'events',
];

describe('database schema and access', () => {
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

  async function insertAccount(): Promise<string> {
    const id = newId('usr');
    await pool.query('insert into accounts (id, email) values ($1, $2)', [id, `${id}@example.com`]);
    return id;
  }

  it('the cloned database has every table', async () => {
    const { rows } = await pool.query<{ table_name: string }>(
      "select table_name from information_schema.tables where table_schema = 'public'",
    );
    const names = rows.map((row) => row.table_name);
    expect(names).toEqual(expect.arrayContaining(TABLES));
  });

  it('the clone already carries all migrations, so migrating again applies nothing, even concurrently', async () => {
    const other = await openOrm(database.url);
    try {
      expect(await Promise.all([migrate(orm), migrate(other)])).toEqual([[], []]);
    } finally {
      await other.close();
    }
  });

  it('a phone number is unique within an account', async () => {
    const accountId = await insertAccount();
    const insert = () =>
      pool.query('insert into contacts (id, account_id, phone_number) values ($1, $2, $3)', [
        newId('ct'),
        accountId,
        '+15550000001',
      ]);
    await insert();
    await expect(insert()).rejects.toMatchObject({ code: '23505', constraint: 'contacts_account_phone_unique' });

    // Another account may hold the same number.
    const otherAccountId = await insertAccount();
    await pool.query('insert into contacts (id, account_id, phone_number) values ($1, $2, $3)', [
      newId('ct'),
      otherAccountId,
      '+15550000001',
    ]);
  });

  it('credits never go below zero', async () => {
    const accountId = await insertAccount();
    await expect(pool.query('update accounts set credits = credits - 1001 where id = $1', [accountId])).rejects.toMatchObject({
      code: '23514',
      constraint: 'accounts_credits_check',
    });
    await pool.query('update accounts set credits = 0 where id = $1', [accountId]);
  });

  it('an account has at most one main key', async () => {
    const accountId = await insertAccount();
    const insertKey = (kind: string) =>
      pool.query(
        'insert into api_keys (id, account_id, kind, key_hash, key_preview) values ($1, $2, $3, $4, $5)',
        [newId(kind === 'main' ? 'mkey' : 'key'), accountId, kind, Buffer.from(newId('h')), 'abc…'],
      );
    await insertKey('main');
    await insertKey('scoped');
    await insertKey('scoped');
    await expect(insertKey('main')).rejects.toMatchObject({ code: '23505', constraint: 'api_keys_one_main_per_account' });
  });

  it('deleting an account deletes its rows', async () => {
    const accountId = await insertAccount();
    await pool.query('insert into contacts (id, account_id, phone_number) values ($1, $2, $3)', [newId('ct'), accountId, '+1']);
    await pool.query(`insert into events (id, account_id, name, payload) values ($1, $2, 'Contact Created', '{}')`, [newId('evt'), accountId]);
    await pool.query('delete from accounts where id = $1', [accountId]);
    for (const table of ['contacts', 'events']) {
      const { rowCount } = await pool.query(`select 1 from ${table} where account_id = $1`, [accountId]);
      expect(rowCount, table).toBe(0);
    }
  });

  it('the graphile_worker schema exists and the shared pool runs jobs', async () => {
    const { rowCount } = await pool.query("select 1 from information_schema.schemata where schema_name = 'graphile_worker'");
    expect(rowCount).toBe(1);

    const seen: unknown[] = [];
    await pool.query("select graphile_worker.add_job('record', json_build_object('n', 1))");
    await runOnce({
      pgPool: pool,
      taskList: { record: async (payload) => void seen.push(payload) },
      logger: new Logger(() => () => {}),
    });
    expect(seen).toEqual([{ n: 1 }]);
    // runOnce must leave the shared pool open.
    expect((await pool.query('select 1 as one')).rows).toEqual([{ one: 1 }]);
  });

  it('pgPool is the pg.Pool MikroORM uses, returning timestamps as strings', async () => {
    expect(pool).toBeInstanceOf(pg.Pool);
    const { rows } = await pool.query<{ at: unknown }>("select '2026-01-02T03:04:05.678Z'::timestamptz as at");
    expect(typeof rows[0]!.at).toBe('string');
    expect(new Date(rows[0]!.at as string).toISOString()).toBe('2026-01-02T03:04:05.678Z');
  });

  it('entities round-trip through MikroORM with database defaults', async () => {
    const em = orm.em.fork();
    const account = em.create(Account, { id: newId('usr'), email: `${newId('e')}@example.com` });
    const contact = em.create(Contact, { id: newId('ct'), account, phoneNumber: '+15550000002' });
    await em.flush();

    const found = await orm.em.fork().findOneOrFail(Contact, contact.id, { populate: ['account'] });
    expect(found).toBeInstanceOf(Contact);
    expect(found.phoneNumber).toBe('+15550000002');
    expect(found.firstName).toBe('Unknown');
    expect(found.isBotActive).toBe(true);
    expect(found.createdAt).toBeInstanceOf(Date);
    expect(found.account.id).toBe(account.id);
    expect(found.account.getEntity().plan).toBe('pro');
    expect(found.account.getEntity().credits).toBe(1000);
  });
});
