// BENCH_SERVER_CPUS (a taskset CPU list, e.g. `0`) holds what a scenario measures, the servers
// and PostgreSQL, to those CPUs and the load to the others: how a ratio moves on a slower
// machine, measured on this one. Unset, nothing is pinned.
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';

const SERVER_CPUS = process.env.BENCH_SERVER_CPUS?.trim() || null;

/** The CPUs a taskset list names (`0`, `0-1`, `0,2`). */
function cpuSet(list: string): Set<number> {
  const cpus = new Set<number>();
  for (const part of list.split(',')) {
    const [from, to = from] = part.split('-').map(Number);
    if (!Number.isInteger(from) || !Number.isInteger(to) || from! > to!) throw new Error(`BENCH_SERVER_CPUS is not a CPU list: ${list}`);
    for (let cpu = from!; cpu <= to!; cpu++) cpus.add(cpu);
  }
  return cpus;
}

const LOAD_CPUS = (() => {
  if (!SERVER_CPUS) return null;
  const held = cpuSet(SERVER_CPUS);
  const rest = Array.from({ length: availableParallelism() }, (_, cpu) => cpu).filter((cpu) => !held.has(cpu));
  if (rest.length === 0) throw new Error(`BENCH_SERVER_CPUS=${SERVER_CPUS} leaves no CPU for the load`);
  return rest.join(',');
})();

function pin(pid: number | undefined, cpus: string | null): void {
  if (!cpus || pid === undefined) return;
  execFileSync('taskset', ['-a', '-p', '-c', cpus, String(pid)], { stdio: 'ignore' });
}

/** A server's process (the service, a baseline, a worker) to the servers' CPUs. */
export function pinServer(pid: number | undefined): void {
  pin(pid, SERVER_CPUS);
}

/** A load process (autocannon, a driver) to the other CPUs. */
export function pinLoad(pid: number | undefined): void {
  pin(pid, LOAD_CPUS);
}

/** The postmaster and every process it has started; backends it forks later inherit its CPUs. */
export function pinPostgres(postmaster: number): void {
  if (!SERVER_CPUS) return;
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      // Field 4 of /proc/<pid>/stat is the parent, after the command in parentheses.
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      children.set(parent, [...(children.get(parent) ?? []), Number(entry)]);
    } catch {
      // Gone between the listing and the read.
    }
  }
  const pending = [postmaster];
  while (pending.length) {
    const pid = pending.pop()!;
    try {
      pinServer(pid);
    } catch {
      // A backend that ended meanwhile.
    }
    pending.push(...(children.get(pid) ?? []));
  }
}

/** The conditions line of a pinned run; null when nothing is pinned. */
export function pinningCondition(): string | null {
  return SERVER_CPUS ? `servers and PostgreSQL held to CPU ${SERVER_CPUS} (BENCH_SERVER_CPUS), the load to CPU ${LOAD_CPUS}` : null;
}
