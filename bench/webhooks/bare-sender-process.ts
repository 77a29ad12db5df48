// The bare sender (bare-sender.ts) as its own process, kept running between rounds so its
// connections stay warm, as the worker's do.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { pinServer } from '../cpu-pinning.ts';

const root = path.resolve(import.meta.dirname, '../..');

export type BareSenderSettings = { accounts: { id: string; email: string; urls: string[] }[]; secret: string; concurrency: number };
export type BareRun = { deliveries: number; seconds: number; failures: number };
export type BareSender = { pid: number; run(seconds: number): Promise<BareRun>; stop(): Promise<void> };

export async function startBareSender(settings: BareSenderSettings, env: Record<string, string>): Promise<BareSender> {
  const child = spawn(process.execPath, ['bench/webhooks/bare-sender.ts'], {
    cwd: root,
    env: { ...process.env, ...env, BARE_SENDER: JSON.stringify(settings) },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  pinServer(child.pid);
  let stderr = '';
  child.stderr!.on('data', (chunk) => (stderr += chunk));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
  const nextLine = async (): Promise<string> => {
    const line = await Promise.race([lines.next(), exited.then(() => null)]);
    if (line === null || line.done) throw new Error(`bare sender exited: ${stderr}`);
    return line.value;
  };
  if ((await nextLine()) !== 'bare sender ready') throw new Error(`bare sender did not start: ${stderr}`);
  return {
    pid: child.pid!,
    async run(seconds) {
      child.stdin!.write(`run ${seconds}\n`);
      return JSON.parse(await nextLine()) as BareRun;
    },
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.stdin!.end();
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    },
  };
}
