// Child processes and temporary directories of one benchmark run, and their clean-up: every
// process this run started is stopped (by its own PID) and every directory removed, when the
// run ends, fails, or is interrupted with Ctrl-C.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pinLoad, pinServer } from './cpu-pinning.ts';

export const root = path.resolve(import.meta.dirname, '..');

const cleanups: (() => Promise<void>)[] = [];

/** Runs fn at clean-up, after everything registered later (last in, first out). */
export function atCleanup(fn: () => Promise<void>): void {
  cleanups.push(fn);
}

export async function cleanUp(): Promise<void> {
  while (cleanups.length > 0) {
    const fn = cleanups.pop()!;
    await fn().catch((error: Error) => process.stderr.write(`clean-up: ${error.message}\n`));
  }
}

let interrupted = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (interrupted) return;
    interrupted = true;
    process.stderr.write(`\n${signal}: stopping the benchmark's processes\n`);
    void cleanUp().finally(() => process.exit(130));
  });
}

export async function tempDir(name: string): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), `mapi-bench-${name}-`));
  atCleanup(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      probe.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no free port'))));
    });
  });
}

export type NodeProcess = {
  child: ChildProcess;
  /** The first match of the ready pattern. */
  ready: RegExpExecArray;
  output(): string;
  /** SIGTERM, then wait for the exit (SIGKILL after the grace period). */
  stop(): Promise<void>;
};

/** The environment a child gets: this process's, minus the service's own variables. */
function childEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const name of ['DATABASE_URL', 'PORT', 'HOST', 'DATA_DIR', 'SECRET_KEY', 'ROLE', 'TLS', 'TRUST_PROXY', 'LOG_LEVEL']) delete env[name];
  return { ...env, ...extra };
}

/**
 * Starts `node <script>` from the repository root (or `cwd`, another checkout of it) and
 * resolves once its output matches `readyPattern`; rejects if it exits first. Stopped at
 * clean-up unless stopped before.
 */
export function startNode(
  script: string,
  env: Record<string, string>,
  readyPattern: RegExp,
  graceMs = 35_000,
  nodeArgs: string[] = [],
  cwd = root,
): Promise<NodeProcess> {
  const child = spawn(process.execPath, [...nodeArgs, script], { cwd, env: childEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
  pinServer(child.pid);
  let output = '';
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let stopping: Promise<void> | undefined;
  const stop = () =>
    (stopping ??= (async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      await exited;
      clearTimeout(timer);
    })());
  atCleanup(stop);
  return new Promise((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const match = readyPattern.exec(output);
      if (!match) return;
      child.off('exit', onEarlyExit);
      resolve({ child, ready: match, output: () => output, stop });
    };
    const onEarlyExit = (code: number | null) => reject(new Error(`${script} exited with ${code} before it was ready:\n${output}`));
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', onEarlyExit);
  });
}

/** Runs `node <script> ...args` to completion and returns its stdout; rejects on a non-zero exit. */
export function runNode(script: string, args: string[]): Promise<string> {
  const child = spawn(process.execPath, [script, ...args], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
  pinLoad(child.pid);
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => (stdout += chunk));
  child.stderr.on('data', (chunk) => (stderr += chunk));
  const kill = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  };
  atCleanup(kill);
  return new Promise((resolve, reject) => {
    child.once('exit', (code) => (code === 0 ? resolve(stdout) : reject(new Error(`${script} exited with ${code}:\n${stderr}`))));
  });
}
