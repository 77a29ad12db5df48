// Process CPU per request of two checkouts of the service, at one fixed moderate rate, in
// alternating rounds (A, B, A, B, ...) on one database: what a change to the request path
// costs or saves, measured without saturating the machine (other work may share it).
//
//   CPU_AB_BASE=/path/to/other/checkout CPU_AB_KIND=read-rest ./node_modules/.bin/node bench/cpu-ab.ts
//
// CPU_AB_KIND: read-rest, read-trpc (the contact lookups, through autocannon at CPU_AB_RATE
// requests/s, 300 by default) or push (CPU_AB_VISITORS chat-widget sockets, 1,000 by default,
// and CPU_AB_RATE visitor messages/s, 150 by default). CPU_AB_BASE: the other checkout (its
// node_modules may be a symlink); without it only this checkout runs (for a profile:
// BENCH_API_CPU_PROF=<dir>). CPU_AB_BARE=two-reads adds the bare lookup route (its profile:
// BENCH_BARE_CPU_PROF). CPU_AB_TOGETHER=1 loads them at once (below). CPU_AB_ROUNDS (5),
// CPU_AB_SECONDS (10), CPU_AB_ACCOUNTS (300).
import { performance } from 'node:perf_hooks';
import { readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { processCpuMs, postgresCpuMs, postmasterPid } from './cpu-usage.ts';
import { seedAccounts, startBenchDatabase } from './database.ts';
import type { LoadSpec } from './load.ts';
import { LoadRunner, median, progress } from './measure.ts';
import { cleanUp, root } from './processes.ts';
import { startPushDrivers } from './push/drivers.ts';
import { callServer, startApiProcess, startBareServer, type StartedServer } from './scenarios/servers.ts';

const kind = process.env.CPU_AB_KIND ?? 'read-rest';
const push = kind === 'push';
const rate = Number(process.env.CPU_AB_RATE) || (push ? 150 : 300);
const rounds = Number(process.env.CPU_AB_ROUNDS) || 5;
const seconds = Number(process.env.CPU_AB_SECONDS) || 10;
const accounts = Number(process.env.CPU_AB_ACCOUNTS) || 300;
const visitors = Number(process.env.CPU_AB_VISITORS) || 1_000;
const base = process.env.CPU_AB_BASE;
/**
 * CPU_AB_TOGETHER=1: each round loads every server at once, each at the rate, so whatever else
 * slows the machine in a round slows each side alike (a shared VM's neighbours moved the
 * alternating rounds' figures by up to half). PostgreSQL's figure is then theirs together.
 * The servers spend the same accounts' keys at once: keep rate × servers × 60 / CPU_AB_ACCOUNTS
 * under a key's 300 a minute, or the rounds' notes show non-2xx answers.
 */
const together = process.env.CPU_AB_TOGETHER === '1';
/** Kernel-mode CPU of a process so far, ms (/proc stime; processCpuMs is user and kernel together). */
function kernelCpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[12]) * 10;
}



async function main() {
  const database = await startBenchDatabase();
  const { targetsFile, targets } = await seedAccounts(database.url, accounts + 1);
  const spare = targets.pop()!;
  await writeFile(targetsFile, JSON.stringify(targets));
  const loads = new LoadRunner(targetsFile, targets);
  const postmaster = await postmasterPid(database.url);
  const limits: Record<string, string> = push
    ? {
        WIDGET_REQUESTS_PER_IP_PER_MINUTE: '10000000',
        WIDGET_MESSAGES_PER_IP_PER_MINUTE: '10000000',
        WIDGET_NEW_VISITORS_PER_IP_PER_MINUTE: '10000000',
        WIDGET_SOCKETS_PER_IP: '10000000',
        TRUST_PROXY: '127.0.0.1',
      }
    : {};
  const trees: [string, string][] = [['A', root], ...(base ? [['B', base] as [string, string]] : [])];
  const servers = new Map<string, StartedServer>();
  // CPU_AB_NODE_ARGS: Node arguments for both (`--cpu-prof-interval=100` beside BENCH_API_CPU_PROF, say).
  const nodeArgs = process.env.CPU_AB_NODE_ARGS?.split(' ').filter(Boolean) ?? [];
  for (const [name, tree] of trees) servers.set(name, await startApiProcess(database.url, limits, nodeArgs, tree));
  // CPU_AB_BARE=two-reads (or counting): bench/bare-server.ts in that mode measured beside them (lookups only).
  const bareMode = process.env.CPU_AB_BARE as 'two-reads' | 'counting' | undefined;
  if (bareMode && !push) {
    servers.set('bare', await startBareServer(database.url, servers.get('A')!.dataDir, bareMode));
    trees.push(['bare', `bench/bare-server.ts ${bareMode}`]);
  }

  // Push: widgets, sockets and a primed contact per visitor on each server.
  const drivers = push ? await startPushDrivers(2) : null;
  const posts = new Map<string, string>();
  if (drivers) {
    const origin = servers.get('A')!.origin;
    const widgets: string[] = [];
    for (let index = 0; index < Math.max(20, Math.ceil(rate / 10)); index++) {
      const created = JSON.parse(await callServer(origin, 'POST', '/v1/chat-widgets', { 'x-api-key': spare.apiKey }, { name: `ab widget ${index}`, settings: {} }));
      widgets.push(created.data.id);
    }
    const config = JSON.parse(await callServer(origin, 'GET', `/v1/chat-widget-config?configId=${encodeURIComponent(widgets[0]!)}`, {}));
    const post = `/v1/incoming-chat-widget-message?userId=${encodeURIComponent(String(config.data.userId))}`;
    for (const [name, server] of servers) {
      progress(`cpu-ab: connecting ${visitors} visitors to ${name}`);
      await drivers.connect(name, server.origin, widgets, visitors);
      await drivers.round(name, post, rate, 0, visitors / rate, `p${name}`);
      posts.set(name, post);
    }
  }

  const measure = async (name: string, warmUp: boolean) => {
    const server = servers.get(name)!;
    const pid = server.process.child.pid!;
    const cpu = processCpuMs(pid);
    const kernel = kernelCpuMs(pid);
    const pgCpu = postgresCpuMs(postmaster);
    const started = performance.now();
    let count: number;
    let note: string;
    if (drivers) {
      const result = await drivers.round(name, posts.get(name)!, rate, 0, warmUp ? 2 : seconds, `${name}${started}`);
      // The last messages' pushes land after the round's answer: let them settle.
      await new Promise((resolve) => setTimeout(resolve, 300));
      count = result.sent;
      note = `p50 ${result.p50.toFixed(1)} ms p99 ${result.p99.toFixed(1)} ms errors ${result.errors} lost ${result.lost}`;
    } else {
      const result = await loads.run({ urls: [server.origin], kind: kind as LoadSpec['kind'], connections: 10, durationSeconds: warmUp ? 2 : seconds, overallRate: rate });
      count = result.requests;
      note = `${Math.round(result.requestsPerSecond)} req/s p50 ${result.p50} ms p99 ${result.p99} ms non-2xx ${result.non2xx}`;
    }
    const wall = performance.now() - started;
    return { cpu: (processCpuMs(pid) - cpu) / count, kernel: (kernelCpuMs(pid) - kernel) / count, pg: (postgresCpuMs(postmaster) - pgCpu) / count, count, wall, note };
  };

  for (const [name] of trees) await measure(name, true);
  const results = new Map<string, { cpu: number; kernel: number; pg: number }[]>(trees.map(([name]) => [name, []]));
  for (let round = 1; round <= rounds; round++) {
    // Alternate which goes first.
    const order = round % 2 === 1 ? trees : [...trees].reverse();
    const report = (name: string, result: Awaited<ReturnType<typeof measure>>) => {
      results.get(name)!.push(result);
      progress(`cpu-ab ${kind} round ${round} ${name}: process ${result.cpu.toFixed(3)} ms (kernel ${result.kernel.toFixed(3)}), PostgreSQL ${result.pg.toFixed(3)} ms per request (${result.count} requests; ${result.note})`);
    };
    if (together) {
      const settled = await Promise.all(order.map(([name]) => measure(name, false)));
      order.forEach(([name], index) => report(name, settled[index]!));
    } else {
      for (const [name] of order) report(name, await measure(name, false));
    }
  }
  for (const [name, tree] of trees) {
    const runs = results.get(name)!;
    process.stdout.write(
      `${name} (${tree}): process CPU per request median ${median(runs.map((r) => r.cpu)).toFixed(3)} ms [${runs.map((r) => r.cpu.toFixed(3)).join(' ')}] (kernel ${median(runs.map((r) => r.kernel)).toFixed(3)}), ` +
        `PostgreSQL ${median(runs.map((r) => r.pg)).toFixed(3)} ms\n`,
    );
  }
  if (drivers) {
    for (const [name] of trees) await drivers.disconnect(name);
    await drivers.stop();
  }
  for (const server of servers.values()) await server.process.stop();
}

try {
  await main();
} catch (error) {
  process.stderr.write(`cpu-ab failed: ${(error as Error).stack ?? error}\n`);
  process.exitCode = 1;
} finally {
  await cleanUp();
}
