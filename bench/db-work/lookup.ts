// The work per authenticated contact lookup (REST GET /v1/contacts?phoneNumber=… and tRPC GET
// /trpc/contacts.find), rotating over many accounts' keys as the `read` scenario does, at a
// fixed moderate rate so the figures do not depend on how busy the machine is: PostgreSQL's
// own counters (measureWork), and the CPU the service process and PostgreSQL spend per lookup.
// With a second checkout it compares two versions of the service on one database, in
// alternating rounds (CPU figures vary with the machine's load: read the spread).
//
//   node bench/db-work/lookup.ts [requests] [rate/s] [rounds] [other-tree]
//
// LOOKUP_KINDS=rest,trpc picks the surfaces (both by default); LOOKUP_ACCOUNTS the accounts (3,000).
// The REST rounds also measure bench/bare-server.ts in its two-read mode (the lookups' target
// baseline) unless LOOKUP_BARE=0.
import pg from 'pg';
import { Agent, request } from 'undici';
import { postgresCpuMs, postmasterPid, processCpuMs } from '../cpu-usage.ts';
import { seedAccounts } from '../database.ts';
import type { LoadTarget } from '../load.ts';
import { median } from '../measure.ts';
import { cleanUp, root } from '../processes.ts';
import { startApiProcess, startBareServer, type StartedServer } from '../scenarios/servers.ts';
import { measureWork, startCountingDatabase } from './counters.ts';

const REQUESTS = Number(process.argv[2]) || 20_000;
const RATE = Number(process.argv[3]) || 1_500;
const ROUNDS = Number(process.argv[4]) || 3;
const OTHER_TREE = process.argv[5];
const ACCOUNTS = Number(process.env.LOOKUP_ACCOUNTS) || 3_000;
const KINDS = (process.env.LOOKUP_KINDS ?? 'rest,trpc').split(',').map((kind) => kind.trim()) as Array<'rest' | 'trpc'>;
const CONNECTIONS = 10;

const insecure = new Agent({ connect: { rejectUnauthorized: false }, connections: CONNECTIONS, pipelining: 1 });

/** Where the next lookup continues in the key rotation (shared by every run, as load.ts's offset). */
let slot = 0;

function lookupPath(kind: 'rest' | 'trpc', target: LoadTarget, phone: string): { path: string; headers: Record<string, string> } {
  return kind === 'rest'
    ? { path: `/v1/contacts?phoneNumber=${encodeURIComponent(phone)}&apiKey=${encodeURIComponent(target.apiKey)}`, headers: {} }
    : { path: `/trpc/contacts.find?input=${encodeURIComponent(JSON.stringify({ phoneNumber: phone }))}`, headers: { 'x-api-key': target.apiKey } };
}

/** `count` lookups at RATE per second (at most CONNECTIONS in flight); throws on any non-2xx. */
async function drive(origin: string, kind: 'rest' | 'trpc', targets: LoadTarget[], count: number): Promise<void> {
  const started = performance.now();
  let issued = 0;
  let failures = 0;
  let firstFailure = '';
  const lane = async () => {
    for (;;) {
      const index = issued++;
      if (index >= count) return;
      const due = started + (index * 1000) / RATE;
      const wait = due - performance.now();
      if (wait > 1) await new Promise((resolve) => setTimeout(resolve, wait));
      const at = slot++;
      const target = targets[at % targets.length]!;
      const phone = target.phones[Math.floor(at / targets.length) % target.phones.length]!;
      const { path, headers } = lookupPath(kind, target, phone);
      const response = await request(origin + path, { method: 'GET', dispatcher: insecure, headers });
      const text = await response.body.text();
      if (response.statusCode !== 200) {
        failures++;
        firstFailure ||= `${response.statusCode} ${text.slice(0, 200)}`;
      }
    }
  };
  await Promise.all(Array.from({ length: CONNECTIONS }, lane));
  if (failures > 0) throw new Error(`${kind}: ${failures} lookups failed, first: ${firstFailure}`);
}

type Round = { label: string; kind: string; serverCpuMs: number; postgresCpuMs: number; work: string[] };

try {
  const { url } = await startCountingDatabase();
  // Planning is work of its own (a statement may be planned at every execution): count it too.
  const admin = new pg.Client(url);
  await admin.connect();
  await admin.query(`alter system set pg_stat_statements.track_planning = on`);
  await admin.query('select pg_reload_conf()');
  /** Plans and planning time per lookup of the statements measureWork just counted. */
  const planning = async (): Promise<string[]> => {
    const { rows } = await admin.query<{ calls: string; plans: string; ms: number; query: string }>(
      `select calls, plans, total_plan_time as ms, left(regexp_replace(query, '\\s+', ' ', 'g'), 60) as query
         from pg_stat_statements where toplevel and calls * 10 >= $1 order by calls desc`,
      [REQUESTS],
    );
    return rows.map((row) => `planned ${(Number(row.plans) / REQUESTS).toFixed(2)} per lookup, ${((row.ms / REQUESTS) * 1000).toFixed(0)} µs: ${row.query}`);
  };
  process.stderr.write(`seeding ${ACCOUNTS} accounts\n`);
  const { targets } = await seedAccounts(url, ACCOUNTS);
  const trees: Array<{ label: string; tree: string }> = OTHER_TREE
    ? [
        { label: 'other', tree: OTHER_TREE },
        { label: 'this', tree: root },
      ]
    : [{ label: 'this', tree: root }];
  const services: Array<{ label: string; server: StartedServer }> = [];
  for (const { label, tree } of trees) services.push({ label, server: await startApiProcess(url, {}, [], tree) });
  // The floor the lookups' targets stand against (REST only): bare fastify doing the two reads.
  if (process.env.LOOKUP_BARE !== '0') services.push({ label: 'bare', server: await startBareServer(url, services[0]!.server.dataDir, 'two-reads') });
  const postmaster = await postmasterPid(url);
  for (const { label, server } of services) for (const kind of KINDS) if (label !== 'bare' || kind === 'rest') await drive(server.origin, kind, targets, 2_000);

  const rounds: Round[] = [];
  for (let round = 1; round <= ROUNDS; round++) {
    for (const kind of KINDS) {
      for (const { label, server } of round % 2 === 1 ? services : [...services].reverse()) {
        if (label === 'bare' && kind !== 'rest') continue;
        const pid = server.process.child.pid!;
        let cpu = { server: 0, postgres: 0 };
        const report = await measureWork(url, REQUESTS, async () => {
          const before = { server: processCpuMs(pid), postgres: postgresCpuMs(postmaster) };
          await drive(server.origin, kind, targets, REQUESTS);
          cpu = { server: processCpuMs(pid) - before.server, postgres: postgresCpuMs(postmaster) - before.postgres };
        });
        const result = { label, kind, serverCpuMs: cpu.server / REQUESTS, postgresCpuMs: cpu.postgres / REQUESTS, work: [...report.lines, ...(await planning())] };
        rounds.push(result);
        process.stderr.write(
          `round ${round} ${kind} ${label}: server ${result.serverCpuMs.toFixed(3)} ms, PostgreSQL ${result.postgresCpuMs.toFixed(3)} ms per lookup\n  ${report.lines.join('\n  ')}\n`,
        );
      }
    }
  }

  console.log(`${REQUESTS} lookups a round at ${RATE}/s over ${ACCOUNTS} keys, ${ROUNDS} rounds; CPU ms per lookup, median [min–max]`);
  for (const kind of KINDS) {
    for (const { label } of services) {
      if (label === 'bare' && kind !== 'rest') continue;
      const mine = rounds.filter((round) => round.kind === kind && round.label === label);
      const spread = (pick: (round: Round) => number) => {
        const values = mine.map(pick);
        return `${median(values).toFixed(3)} [${Math.min(...values).toFixed(3)}–${Math.max(...values).toFixed(3)}]`;
      };
      console.log(`${kind} ${label}${label === 'other' ? ` (${OTHER_TREE})` : ''}: server ${spread((r) => r.serverCpuMs)}, PostgreSQL ${spread((r) => r.postgresCpuMs)}`);
      console.log(`  ${mine.at(-1)!.work.join('\n  ')}`);
    }
  }
  for (const { server } of services) await server.process.stop();
  await admin.end();
} finally {
  await cleanUp();
}
process.exit(0);
