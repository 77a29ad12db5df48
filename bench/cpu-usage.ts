// CPU time of the processes a figure depends on, from /proc (Linux), so the report can say
// where a request's time goes: the server process itself, or PostgreSQL.
import { readFileSync, readdirSync } from 'node:fs';
import pg from 'pg';

/** Clock ticks per second of /proc's times (USER_HZ: 100 on Linux). */
const TICKS_PER_SECOND = 100;

type Times = { ppid: number; own: number; children: number; majorFaults: number };

function times(pid: number): Times | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name may hold spaces; the fields after it are space-separated.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const tick = (index: number) => Number(fields[index]);
    return { ppid: tick(1), own: tick(11) + tick(12), children: tick(13) + tick(14), majorFaults: tick(9) };
  } catch {
    return null;
  }
}

/** Milliseconds of CPU a process has used so far (0 when it is gone). */
export function processCpuMs(pid: number): number {
  return ((times(pid)?.own ?? 0) * 1000) / TICKS_PER_SECOND;
}

/**
 * Page faults of a process that had to read from disk so far: its code or a file's pages
 * dropped by the kernel's reclaim, each a stall of the thread that touched them.
 */
export function processMajorFaults(pid: number): number {
  return times(pid)?.majorFaults ?? 0;
}

/** The same for every process of the machine (/proc/vmstat). */
export function machineMajorFaults(): number {
  const match = /^pgmajfault (\d+)$/m.exec(readFileSync('/proc/vmstat', 'utf8'));
  return match ? Number(match[1]) : 0;
}

/** The postmaster of the database: the parent of a backend serving this connection. */
export async function postmasterPid(databaseUrl: string): Promise<number> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ pid: number }>('select pg_backend_pid() as pid');
    const backend = times(rows[0]!.pid);
    if (!backend) throw new Error('cannot read the backend process from /proc (is PostgreSQL on this machine?)');
    return backend.ppid;
  } finally {
    await client.end();
  }
}

/** Milliseconds of CPU the whole cluster has used: the postmaster, its live children and its exited ones. */
export function postgresCpuMs(postmaster: number): number {
  const root = times(postmaster);
  if (!root) return 0;
  let ticks = root.own + root.children;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const child = times(Number(entry));
    if (child && child.ppid === postmaster) ticks += child.own;
  }
  return (ticks * 1000) / TICKS_PER_SECOND;
}
