// `node server/main.ts` as a real child process, for the tests of starting and stopping it.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';

export const root = path.resolve(import.meta.dirname, '../..');

/** The port in a base URL the service printed. */
export function portOf(baseUrl: string): number {
  return Number(new URL(baseUrl).port);
}

export function serviceEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const name of ['DATABASE_URL', 'PORT', 'HOST', 'DATA_DIR', 'SECRET_KEY', 'ROLE', 'TLS', 'TRUST_PROXY']) delete env[name];
  return { ...env, LOG_LEVEL: 'warn', ...extra };
}

export type ServiceProcess = {
  child: ChildProcess;
  baseUrl: string;
  /** The port it listens on, read from its start line (PORT=0 lets it choose one). */
  port: number;
  exited: Promise<number | null>;
  /** Everything the process printed so far. */
  stdout(): string;
  stderr(): string;
};

/**
 * Starts `server/main.ts` and resolves once it prints the line with its base URL. Without a
 * PORT in `env` it listens on one it chooses (PORT=0). A PORT given is a port used before
 * (a restart on its old address), which another process may have taken meanwhile: while the
 * start is refused for the port being in use, it is tried again, up to `portWaitMs`.
 */
export async function startServiceProcess(
  env: Record<string, string>,
  options: { detached?: boolean; portWaitMs?: number } = {},
): Promise<ServiceProcess> {
  const deadline = Date.now() + (options.portWaitMs ?? 30_000);
  for (;;) {
    try {
      return await startOnce({ PORT: '0', ...env }, options.detached ?? false);
    } catch (error) {
      if (!(error instanceof PortInUseError) || Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
}

class PortInUseError extends Error {}

function startOnce(env: Record<string, string>, detached: boolean): Promise<ServiceProcess> {
  const child = spawn(process.execPath, ['server/main.ts'], {
    cwd: root,
    env: serviceEnv(env),
    stdio: ['ignore', 'pipe', 'pipe'],
    detached,
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
      resolve({ child, baseUrl: match[1]!, port: portOf(match[1]!), exited, stdout: () => stdout, stderr: () => stderr });
    };
    const onEarlyExit = (code: number | null) => {
      const message = `exited ${code}: ${stderr}`;
      reject(/cannot start: port \d+ is already in use/.test(stderr) ? new PortInUseError(message) : new Error(message));
    };
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
