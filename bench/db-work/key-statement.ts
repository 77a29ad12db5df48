// What the API-key statements that only read (server/auth/sql/resolve-caller.ts: a key read
// whole by its HMAC, and a key the process holds, confirmed live by its id) cost
// PostgreSQL per execution, without the HTTP around it: one client executes it over 3,000
// seeded keys, each key and account holding a leased count in the window as on a running
// service, in alternating rounds with the bare two-read route's key read (bench/bare-server.ts)
// and any statements a VARIANTS module adds. Per execution it reports the backend's CPU (from
// /proc: protocol, executor start-up and shutdown included) and pg_stat_statements' execution
// time (which leaves those out). The CPU figure moves with the machine's load; compare rounds.
//
//   node bench/db-work/key-statement.ts [executions] [rounds]
//   VARIANTS=/path/to/file.ts (exports `variants: Record<string, { text: string; values(keyHash: Buffer): unknown[] }>`)
//   EXPLAIN=1 prints each statement's generic plan, executed once, instead
import { readFileSync } from 'node:fs';
import pg from 'pg';
import { PLANS, planHasFeature } from '../../server/plans.ts';
import { MAIN_KEY_RATE_LIMIT } from '../../server/rate-limit/limits.ts';
import type { CachedKey } from '../../server/auth/credential-cache.ts';
import { keyCallerQuery, liveKeyQuery } from '../../server/auth/sql/resolve-caller.ts';
import { READ_KEY_COUNTS } from '../../server/rate-limit/sql/rate-counters.ts';
import { seedAccounts } from '../database.ts';
import { median } from '../measure.ts';
import { cleanUp } from '../processes.ts';
import { startCountingDatabase } from './counters.ts';

const EXECUTIONS = Number(process.argv[2]) || 6000;
const ROUNDS = Number(process.argv[3]) || 5;
const ACCOUNTS = 3000;

type Variant = { text: string; values(keyHash: Buffer): unknown[] };
const plans = PLANS.filter((plan) => planHasFeature(plan, 'api_access'));
/** Each seeded key's id, by its HMAC in hex (read once the keys are seeded). */
const keyIds = new Map<string, string>();
const held = (keyId: string): CachedKey => ({
  kind: 'key', keyId, keyKind: 'main', accountId: '', plan: 'pro', scopes: null, bucketLimit: MAIN_KEY_RATE_LIMIT, expiresAt: null, version: 0,
});
const variants: Record<string, Variant> = {
  service: {
    text: keyCallerQuery(Buffer.alloc(0), { fixedLimit: MAIN_KEY_RATE_LIMIT, allowedPlans: plans, userId: null }, READ_KEY_COUNTS).text,
    values: (hash) => [...keyCallerQuery(hash, { fixedLimit: MAIN_KEY_RATE_LIMIT, allowedPlans: plans, userId: null }, READ_KEY_COUNTS).values],
  },
  'service, key held': {
    text: liveKeyQuery(held(''), Buffer.alloc(0), null, READ_KEY_COUNTS).text,
    values: (hash) => [...liveKeyQuery(held(keyIds.get(hash.toString('hex'))!), hash, null, READ_KEY_COUNTS).values],
  },
  'bare key read': {
    text: `select k.account_id from api_keys k join accounts a on a.id = k.account_id
        where k.key_hash = $1 and k.revoked_at is null and (k.expires_at is null or k.expires_at > now()) and a.plan = any($2::text[])`,
    values: (hash) => [hash, plans],
  },
  ...(process.env.VARIANTS ? ((await import(process.env.VARIANTS)) as { variants: Record<string, Variant> }).variants : {}),
};

/** CPU ticks (1/100 s) a process has used. */
function cpuTicks(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return Number(fields[11]) + Number(fields[12]);
}

try {
  const { url } = await startCountingDatabase();
  process.stderr.write(`seeding ${ACCOUNTS} accounts\n`);
  await seedAccounts(url, ACCOUNTS);
  const client = new pg.Client(url);
  await client.connect();
  const backend = (await client.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]!.pid;
  const keys = (await client.query<{ key_hash: Buffer; id: string }>('select key_hash, id from api_keys')).rows;
  for (const key of keys) keyIds.set(key.key_hash.toString('hex'), key.id);
  const hashes = keys.map((key) => key.key_hash);
  // A leased block for every key and account in the current window, as a service has them.
  await client.query(`insert into rate_counters (bucket, window_start, count)
    select bucket, date_bin('60 seconds', now(), 'epoch'), 37 from (select 'key:' || id as bucket from api_keys union all select 'account:' || id from accounts) b
    on conflict do nothing`);
  await client.query('analyze');
  const names = Object.keys(variants);
  const run = (name: string, i: number) => client.query({ name, text: variants[name]!.text, values: variants[name]!.values(hashes[(i * 7) % hashes.length]!) });

  if (process.env.EXPLAIN) {
    await client.query('set plan_cache_mode = force_generic_plan');
    for (const [index, name] of names.entries()) {
      const parameters = variants[name]!.values(hashes[0]!);
      await client.query(`prepare p${index} as ${variants[name]!.text}`);
      const literals = parameters.map((value) => client.escapeLiteral(Buffer.isBuffer(value) ? `\\x${value.toString('hex')}` : Array.isArray(value) ? `{${value.join(',')}}` : String(value)));
      const { rows } = await client.query(`explain (analyze, buffers, costs off) execute p${index}(${parameters.map((value, i) => (value === null ? 'null' : literals[i])).join(', ')})`);
      console.log(`${name}\n${rows.map((row) => `  ${row['QUERY PLAN']}`).join('\n')}`);
    }
  } else {
    for (const name of names) for (let i = 0; i < 500; i++) await run(name, i);
    const cpu: Record<string, number[]> = {};
    const execution: Record<string, number[]> = {};
    for (let round = 0; round < ROUNDS; round++) {
      for (const name of round % 2 === 0 ? names : [...names].reverse()) {
        await client.query('select pg_stat_statements_reset()');
        const before = cpuTicks(backend);
        for (let i = 0; i < EXECUTIONS; i++) {
          const { rows } = await run(name, i);
          if (rows.length !== 1) throw new Error(`${name}: ${rows.length} rows`);
        }
        (cpu[name] ??= []).push(((cpuTicks(backend) - before) * 10_000) / EXECUTIONS);
        const { rows } = await client.query<{ ms: number }>(`select sum(total_exec_time) as ms from pg_stat_statements where query not like '%pg_stat_statements%'`);
        (execution[name] ??= []).push((Number(rows[0]!.ms) * 1000) / EXECUTIONS);
      }
    }
    console.log(`${EXECUTIONS} executions a round, ${ROUNDS} rounds; µs per execution, median [each round]`);
    for (const name of names) {
      const list = (values: number[]) => values.map((value) => value.toFixed(0)).join(' ');
      console.log(`${name}: backend CPU ${median(cpu[name]!).toFixed(1)} [${list(cpu[name]!)}], execution ${median(execution[name]!).toFixed(1)} [${list(execution[name]!)}]`);
    }
  }
  await client.end();
} finally {
  await cleanUp();
}
process.exit(0);
