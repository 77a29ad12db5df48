// The service's worker as its own process (`node server/main.ts`, ROLE=worker), as it
// runs in production; optionally under --cpu-prof.
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { pinServer } from '../cpu-pinning.ts';

const root = path.resolve(import.meta.dirname, '../..');

export type WorkerProcess = { child: ChildProcess; stop(): Promise<void>; stderr(): string };

export async function startWorkerProcess(env: Record<string, string>, options: { cpuProfDir?: string } = {}): Promise<WorkerProcess> {
  const base = { ...process.env };
  for (const name of ['DATABASE_URL', 'PORT', 'HOST', 'DATA_DIR', 'SECRET_KEY', 'ROLE', 'TLS', 'TRUST_PROXY']) delete base[name];
  const args = options.cpuProfDir ? ['--cpu-prof', '--cpu-prof-dir', options.cpuProfDir, 'server/main.ts'] : ['server/main.ts'];
  const child = spawn(process.execPath, args, { cwd: root, env: { ...base, LOG_LEVEL: 'warn', ...env, ROLE: 'worker' }, stdio: ['ignore', 'pipe', 'pipe'] });
  pinServer(child.pid);
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk) => (stdout += chunk));
  child.stderr!.on('data', (chunk) => (stderr += chunk));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  await new Promise<void>((resolve, reject) => {
    const timer = setInterval(() => {
      if (stdout.includes('worker running')) {
        clearInterval(timer);
        resolve();
      }
    }, 20);
    void exited.then((code) => {
      clearInterval(timer);
      reject(new Error(`worker exited ${code}: ${stderr}`));
    });
  });
  return {
    child,
    stderr: () => stderr,
    async stop() {
      if (child.exitCode !== null) return;
      child.kill('SIGTERM');
      await exited;
    },
  };
}
