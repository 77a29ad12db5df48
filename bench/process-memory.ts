// Resident memory of a Node process the bench started, after a forced settle: the process
// runs with `--inspect=127.0.0.1:0` (INSPECT_ARGS), and the bench asks it over the inspector
// for full garbage collections before reading VmRSS from /proc, so garbage not yet collected
// does not count as memory the process holds.
import { readFileSync } from 'node:fs';

/** Node's arguments for a loopback inspector on a free port, printed as `Debugger listening on ws://...`. */
export const INSPECT_ARGS = ['--inspect=127.0.0.1:0'];

/** The inspector's WebSocket URL from the process's output. */
export function inspectorUrl(output: string): string {
  const match = /Debugger listening on (ws:\/\/\S+)/.exec(output);
  if (!match) throw new Error('the process printed no inspector URL (was it started with INSPECT_ARGS?)');
  return match[1]!;
}

export type SettledMemory = {
  /** VmRSS, bytes. */
  rss: number;
  /** process.memoryUsage() in the process, bytes. */
  heapUsed: number;
  external: number;
  arrayBuffers: number;
};

/** Resident memory now, bytes (Linux). */
export function residentBytes(pid: number): number {
  const match = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (!match) throw new Error(`no VmRSS for process ${pid}`);
  return Number(match[1]) * 1024;
}

/**
 * Two full collections a moment apart (V8 gives freed pages back after them), then VmRSS and
 * the heap's figures; with `snapshotFile`, a heap snapshot written there too, after the reading.
 */
export async function settledMemory(pid: number, inspector: string, snapshotFile?: string): Promise<SettledMemory> {
  const socket = new WebSocket(inspector);
  await new Promise<void>((resolve, reject) => {
    socket.addEventListener('open', () => resolve(), { once: true });
    socket.addEventListener('error', () => reject(new Error(`cannot reach the inspector at ${inspector}`)), { once: true });
  });
  let nextId = 1;
  const pending = new Map<number, (result: any) => void>();
  socket.addEventListener('message', (event) => {
    const message = JSON.parse(String(event.data)) as { id?: number; result?: unknown };
    if (message.id !== undefined) pending.get(message.id)?.(message.result);
  });
  const call = (method: string, params: Record<string, unknown> = {}) =>
    new Promise<any>((resolve) => {
      const id = nextId++;
      pending.set(id, resolve);
      socket.send(JSON.stringify({ id, method, params }));
    });
  try {
    for (let pass = 0; pass < 2; pass++) {
      await call('HeapProfiler.collectGarbage');
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
    const evaluated = await call('Runtime.evaluate', { expression: 'JSON.stringify(process.memoryUsage())', returnByValue: true });
    const usage = JSON.parse(evaluated.result.value as string) as { heapUsed: number; external: number; arrayBuffers: number };
    const rss = residentBytes(pid);
    if (snapshotFile) {
      await call('Runtime.evaluate', { expression: `process.getBuiltinModule('node:v8').writeHeapSnapshot(${JSON.stringify(snapshotFile)})`, returnByValue: true });
    }
    return { rss, heapUsed: usage.heapUsed, external: usage.external, arrayBuffers: usage.arrayBuffers };
  } finally {
    socket.close();
  }
}
