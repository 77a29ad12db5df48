// `node server/main.ts` as real OS processes: API, worker or both in one, on a test's database
// or on an embedded one under DATA_DIR. Each process shares nothing with the test process
// (no caches, pools or module state), which is what the scale-out and crash tests need.
// The process binds its own port (PORT=0 unless a restart must take over a port) and the
// helper reads it from the line the service prints once it accepts requests.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { configSchema } from '../../server/config.ts';
import { TEST_SECRET_KEY } from './service.ts';

const root = path.resolve(import.meta.dirname, '../..');

export type ServiceProcessOptions = {
  /** ROLE of the process; `all` when unset. */
  role?: 'api' | 'worker' | 'all';
  /** The test's database; unset = the service starts its embedded PostgreSQL under DATA_DIR. */
  databaseUrl?: string;
  /** Reuse a DATA_DIR (what a supervisor restarting a crashed process does); unset = a fresh temp dir. */
  dataDir?: string;
  /** Only to take over the port of a process that has exited (a restart); unset = the process picks one. */
  port?: number;
  /** More configuration (WEBHOOK_ALLOW_HOSTS, MESSAGING_API_URL, LOG_LEVEL, SECRET_KEY...). */
  env?: Record<string, string>;
  /** Its own process group (to signal the group as a terminal does). */
  detached?: boolean;
};

export type ServiceProcess = {
  child: ChildProcess;
  pid: number;
  dataDir: string;
  /** The exit code (null when a signal ended it). */
  exited: Promise<number | null>;
  /** Everything the process printed so far. */
  stdout(): string;
  stderr(): string;
  /** SIGTERM, wait for the exit, remove the DATA_DIR; resolves with the exit code. */
  stop(): Promise<number | null>;
  /** SIGKILL (a crash), wait for the exit; the DATA_DIR stays for a restart. */
  kill(): Promise<void>;
};

/** A process serving HTTPS (ROLE api or all). */
export type ListeningServiceProcess = ServiceProcess & { baseUrl: string; origin: string; port: number };

/**
 * The environment of a child: the test process's own (PATH, HOME, NODE_EXTRA_CA_CERTS for the
 * run's test CA...) without any variable the service reads, so only what the test names applies.
 */
export function childEnvironment(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) if (!(name in configSchema.shape)) env[name] = value;
  return { ...env, LOG_LEVEL: 'warn', ...extra };
}

function isRunning(child: ChildProcess): boolean {
  return child.exitCode === null && child.signalCode === null;
}

/**
 * Starts `server/main.ts` and resolves once it accepts requests (the line with its base URL)
 * or, for a worker, once it says it runs. Rejects with its output when it exits first.
 * SECRET_KEY is the test secret on a test database (its rows are sealed with it); on an
 * embedded database the service generates its own, as a first start on a bare machine does.
 */
export function spawnServiceProcess(options: ServiceProcessOptions & { role: 'worker' }): Promise<ServiceProcess>;
export function spawnServiceProcess(options?: ServiceProcessOptions & { role?: 'api' | 'all' }): Promise<ListeningServiceProcess>;
export function spawnServiceProcess(options?: ServiceProcessOptions): Promise<ServiceProcess>;
export async function spawnServiceProcess(options: ServiceProcessOptions = {}): Promise<ServiceProcess> {
  return startProcess(options, () => {});
}

async function startProcess(options: ServiceProcessOptions, onSpawn: (started: ServiceProcess) => void): Promise<ServiceProcess> {
  const role = options.role ?? 'all';
  const dataDir = options.dataDir ?? (await mkdtemp(path.join(tmpdir(), `mapi-${role}-`)));
  const env: Record<string, string> = {
    HOST: '127.0.0.1',
    PORT: String(options.port ?? 0),
    DATA_DIR: dataDir,
    ROLE: role,
    ...(options.databaseUrl ? { DATABASE_URL: options.databaseUrl, SECRET_KEY: TEST_SECRET_KEY } : {}),
    ...options.env,
  };
  const child = spawn(process.execPath, ['server/main.ts'], {
    cwd: root,
    env: childEnvironment(env),
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: options.detached ?? false,
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk) => (stdout += chunk));
  child.stderr!.on('data', (chunk) => (stderr += chunk));
  const signal = async (name: NodeJS.Signals) => {
    if (isRunning(child)) child.kill(name);
    return exited;
  };
  const started: ServiceProcess = {
    child,
    pid: child.pid!,
    dataDir,
    exited,
    stdout: () => stdout,
    stderr: () => stderr,
    async stop() {
      const code = await signal('SIGTERM');
      await rm(dataDir, { recursive: true, force: true });
      return code;
    },
    async kill() {
      await signal('SIGKILL');
    },
  };
  // Registered before the start line: a start that never finishes is still stopped.
  onSpawn(started);

  const startLine = await new Promise<string>((resolve, reject) => {
    const onData = () => {
      const listening = /listening on (https:\/\/\S+)/.exec(stdout);
      if (listening) return done(listening[1]!);
      if (role === 'worker' && stdout.includes('worker running')) done('');
    };
    const onExit = (code: number | null, signalName: string | null) => {
      const failure = new Error(`ROLE=${role} process exited (${code ?? signalName}) before it started: ${stderr}${stdout}`);
      // A DATA_DIR this helper made is of no use to anyone after a failed start.
      if (options.dataDir === undefined) rm(dataDir, { recursive: true, force: true }).then(() => reject(failure), () => reject(failure));
      else reject(failure);
    };
    const done = (line: string) => {
      child.stdout!.off('data', onData);
      child.off('exit', onExit);
      resolve(line);
    };
    child.stdout!.on('data', onData);
    child.once('exit', onExit);
  });
  if (!startLine) return started;
  const url = new URL(startLine);
  const listening: ListeningServiceProcess = { ...started, baseUrl: startLine, origin: url.origin, port: Number(url.port) };
  return listening;
}

export type ServiceProcesses = {
  spawn(options: ServiceProcessOptions & { role: 'worker' }): Promise<ServiceProcess>;
  spawn(options?: ServiceProcessOptions & { role?: 'api' | 'all' }): Promise<ListeningServiceProcess>;
  /** Stops (SIGTERM, by PID) every process still running and removes the DATA_DIRs: for afterAll. */
  stopAll(): Promise<void>;
};

/**
 * Processes a test file starts, stopped together in its afterAll even when a test failed
 * half-way; if the test process itself ends first, they are killed with it.
 */
export function serviceProcesses(): ServiceProcesses {
  const started: ServiceProcess[] = [];
  const killLeft = () => {
    for (const { child } of started) if (isRunning(child)) child.kill('SIGKILL');
  };
  process.once('exit', killLeft);
  return {
    spawn: ((options: ServiceProcessOptions = {}) => startProcess(options, (one) => started.push(one))) as ServiceProcesses['spawn'],
    async stopAll() {
      // All exits first, then the directories: a restarted process may use a killed one's DATA_DIR.
      const stopping = started.splice(0);
      for (const { child } of stopping) if (isRunning(child)) child.kill('SIGTERM');
      await Promise.all(stopping.map((one) => one.exited));
      for (const dataDir of new Set(stopping.map((one) => one.dataDir))) await rm(dataDir, { recursive: true, force: true });
      process.off('exit', killLeft);
    },
  };
}
