// `node server/main.ts` as a real child process, for the tests of starting and stopping it.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import path from 'node:path';

export const root = path.resolve(import.meta.dirname, '../..');

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

export function serviceEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const name of ['DATABASE_URL', 'PORT', 'HOST', 'DATA_DIR', 'SECRET_KEY', 'ROLE', 'TLS', 'TRUST_PROXY']) delete env[name];
  return { ...env, LOG_LEVEL: 'warn', ...extra };
}

export type ServiceProcess = {
  child: ChildProcess;
  baseUrl: string;
  exited: Promise<number | null>;
  /** Everything the process printed so far. */
  stdout(): string;
  stderr(): string;
};

/** Starts `server/main.ts` and resolves once it prints the line with its base URL. */
export function startServiceProcess(env: Record<string, string>, options: { detached?: boolean } = {}): Promise<ServiceProcess> {
  const child = spawn(process.execPath, ['server/main.ts'], {
    cwd: root,
    env: serviceEnv(env),
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: options.detached ?? false,
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  let stdout = '';
  let stderr = '';
  child.stderr!.on('data', (chunk) => (stderr += chunk));
  child.stdout!.on('data', (chunk) => (stdout += chunk));
  return new Promise((resolve, reject) => {
    const onData = () => {
      const match = /listening on (https:\/\/\S+)/.exec(stdout);
      if (!match) return;
      child.stdout!.off('data', onData);
      child.off('exit', onEarlyExit);
      resolve({ child, baseUrl: match[1], exited, stdout: () => stdout, stderr: () => stderr });
    };
    const onEarlyExit = (code: number | null) => reject(new Error(`exited ${code}: ${stderr}`));
    child.stdout!.on('data', onData);
    child.on('exit', onEarlyExit);
  });
}

/** The PID in the cluster's postmaster.pid, or null without one. */
export function postmasterPid(pgDir: string): number | null {
  try {
    return Number.parseInt(readFileSync(path.join(pgDir, 'postmaster.pid'), 'utf8').split('\n')[0] ?? '', 10);
  } catch {
    return null;
  }
}

/** Whether a process runs (signal 0 reaches it and it is not a zombie): the service's own check. */
export { isProcessAlive as isRunning } from '../../server/process-alive.ts';
