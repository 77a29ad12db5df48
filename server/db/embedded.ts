// The embedded PostgreSQL under DATA_DIR: initialised on first use, started in its own
// process group, shared with the admin CLI while the service runs, taken over after a crash.
import { randomBytes } from 'node:crypto';
import { spawn, type ChildProcess } from 'node:child_process';
import { chmod, readFile, rm, unlink, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import pg from 'pg';
import { serviceHoldingDataDir } from '../data-dir-lock.ts';
import { isProcessAlive } from '../process-alive.ts';
import {
  clusterDirectory,
  packagedBinaries,
  postgresUser,
  prepareClusterDirectory,
  reachableBinaries,
  type PostgresBinaries,
  type PostgresUser,
  exists,
} from './postgres-placement.ts';
import { queryRows, rawSql, runSql, sql } from './sql.ts';

export interface EmbeddedPostgresOptions {
  /** Directory owned by the caller; the cluster lives in `${dataDir}/pg` (see clusterDirectory). */
  dataDir: string;
  /** Receives PostgreSQL's and initdb's output, one line at a time. Silent when omitted. */
  log?: (line: string) => void;
  /** Receives the few lines an operator should see (where the cluster went, a take-over). */
  notice?: (line: string) => void;
  /**
   * A cluster already running on this DATA_DIR that this process did not start is adopted:
   * used, and stopped by `stop()`. The service sets it (it holds DATA_DIR's lock, so such a
   * cluster was left by a crash or started by an admin command). Without it the cluster is
   * borrowed and left running, as the admin CLI does beside a running service.
   */
  adoptRunning?: boolean;
  /** Another PostgreSQL build than the packaged one (tests run an older major with it). */
  binaries?: PostgresBinaries;
}

export interface RunningEmbeddedPostgres {
  /** Connection URL of database `app` (user postgres, on 127.0.0.1). */
  url: string;
  stop(): Promise<void>;
}

const DATABASE = 'app';
const USER = 'postgres';

// Clusters this process started, so a second service in the same process borrows rather
// than adopts them.
const startedHere = new Set<string>();

/**
 * Starts (and on first use initialises) the cluster for DATA_DIR, listening on a free port of
 * 127.0.0.1, and makes sure database `app` exists. The caller must call `stop()`; nothing
 * stops the server automatically when the process exits.
 */
export async function startEmbeddedPostgres(opts: EmbeddedPostgresOptions): Promise<RunningEmbeddedPostgres> {
  const dataDir = resolve(opts.dataDir);
  const log = opts.log ?? (() => {});
  const notice = opts.notice ?? log;
  const runsAsRoot = process.getuid?.() === 0;
  const { pgDir, relocated } = await clusterDirectory(dataDir, runsAsRoot);
  if (relocated) notice(`the postgres user cannot reach ${dataDir}, so its embedded PostgreSQL cluster is in ${pgDir}`);

  const initialised = await exists(join(pgDir, 'PG_VERSION'));
  // The password stays in DATA_DIR with the other secrets, wherever the cluster is.
  const password = await readOrCreatePassword(join(dataDir, 'pg-password'), initialised);
  const running = initialised ? await runningServer(pgDir) : null;
  if (running) {
    await waitUntilReady(pgDir, running.pid);
    const url = connectionUrl(password, running.port, DATABASE);
    if (!opts.adoptRunning || startedHere.has(pgDir)) return { url, stop: async () => {} };
    notice(`took over PostgreSQL (pid ${running.pid}) already running on ${pgDir}; it stops with this service`);
    let stopping: Promise<void> | undefined;
    return { url, stop: () => (stopping ??= stopPostmaster(running.pid)) };
  }

  const user = runsAsRoot ? await postgresUser() : null;
  const chosen = opts.binaries ?? (await packagedBinaries());
  const binaries = runsAsRoot ? await reachableBinaries(chosen) : chosen;
  const recent: string[] = [];
  const onOutput = (chunk: Buffer | string) => {
    for (const line of String(chunk).split('\n')) {
      if (!line.trim()) continue;
      recent.push(line);
      if (recent.length > 40) recent.shift();
      log(line);
    }
  };

  if (!initialised) {
    // A half-finished initdb leaves a non-empty directory that initdb refuses to reuse.
    await rm(pgDir, { recursive: true, force: true });
    await prepareClusterDirectory(pgDir, user);
    await initialiseCluster(binaries, pgDir, password, user, onOutput).catch((error: Error) => {
      throw new Error(`Embedded PostgreSQL in ${pgDir} could not be initialised: ${error.message}\n${recent.join('\n')}`);
    });
  }

  let port = 0;
  let child: ChildProcess | undefined;
  // The port is found free and released for postgres to bind, so another process can take
  // it in between; postgres then cannot bind it, and another port is tried.
  for (let attempt = 1; !child; attempt++) {
    port = await findFreePort();
    try {
      child = await startPostmaster(binaries, pgDir, port, user, onOutput);
    } catch (error) {
      if (error instanceof PortTakenError && attempt < PORT_ATTEMPTS) continue;
      throw new Error(`Embedded PostgreSQL in ${pgDir} failed to start: ${(error as Error).message}\n${recent.join('\n')}`);
    }
  }
  startedHere.add(pgDir);
  const postmaster = child;
  let stopping: Promise<void> | undefined;
  const stopOwn = () =>
    (stopping ??= (async () => {
      startedHere.delete(pgDir);
      await stopChild(postmaster);
    })());

  try {
    await ensureDatabase(connectionUrl(password, port, 'postgres'), DATABASE);
  } catch (error) {
    await stopOwn();
    throw error;
  }

  return {
    url: connectionUrl(password, port, DATABASE),
    stop: async () => {
      // An admin command's cluster that a service has meanwhile adopted is the service's now.
      if (!opts.adoptRunning && (await serviceHoldingDataDir(dataDir)) !== null) {
        startedHere.delete(pgDir);
        postmaster.stdout?.destroy();
        postmaster.stderr?.destroy();
        postmaster.unref();
        return;
      }
      await stopOwn();
    },
  };
}

async function initialiseCluster(
  binaries: PostgresBinaries,
  pgDir: string,
  password: string,
  user: PostgresUser | null,
  onOutput: (chunk: Buffer | string) => void,
): Promise<void> {
  // initdb reads the superuser password from a file the postgres user can read; it stores a hash.
  const passwordFile = join(tmpdir(), `mapi-pg-password-${randomBytes(6).toString('hex')}`);
  await writeFile(passwordFile, `${password}\n`, { mode: 0o600 });
  try {
    await chmod(passwordFile, user ? 0o644 : 0o600);
    await new Promise<void>((resolvePromise, reject) => {
      const initdb = spawn(
        binaries.initdb,
        [`--pgdata=${pgDir}`, '--auth=scram-sha-256', `--username=${USER}`, `--pwfile=${passwordFile}`, '--encoding=UTF8', '--lc-messages=C'],
        { ...(user ?? {}), detached: true, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, LC_MESSAGES: 'C' } },
      );
      initdb.stdout.on('data', onOutput);
      initdb.stderr.on('data', onOutput);
      initdb.once('error', reject);
      initdb.once('close', (code, signal) => (code === 0 ? resolvePromise() : reject(new Error(`initdb exited with ${code ?? signal}`))));
    });
  } finally {
    await unlink(passwordFile).catch(() => {});
  }
}

const PORT_ATTEMPTS = 5;

/** Postgres could not listen on its port: another process took it first. */
class PortTakenError extends Error {}

/**
 * Postgres runs in its own process group (detached), so a terminal's Ctrl-C reaches only
 * us and our shutdown stops it in order, after the requests and the worker.
 */
function startPostmaster(
  binaries: PostgresBinaries,
  pgDir: string,
  port: number,
  user: PostgresUser | null,
  onOutput: (chunk: Buffer | string) => void,
): Promise<ChildProcess> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(
      binaries.postgres,
      // TCP on loopback only; no Unix socket, so nothing is written outside the cluster directory.
      ['-D', pgDir, '-p', String(port), '-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories='],
      { ...(user ?? {}), detached: true, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, LC_MESSAGES: 'C' } },
    );
    // Its start-up output, whole: a line can arrive split over two reads.
    let startup = '';
    const onExit = (code: number | null, signal: string | null) => {
      const message = `postgres exited during start-up (${code ?? signal})`;
      reject(/could not bind .*Address already in use/.test(startup) ? new PortTakenError(message) : new Error(message));
    };
    child.once('error', reject);
    child.once('exit', onExit);
    child.stdout!.on('data', onOutput);
    const onStartup = (chunk: Buffer) => {
      startup += chunk;
      if (startup.includes('database system is ready to accept connections')) {
        child.off('exit', onExit);
        child.stderr!.off('data', onStartup);
        resolvePromise(child);
      }
    };
    child.stderr!.on('data', onOutput);
    child.stderr!.on('data', onStartup);
  });
}

/** SIGINT is PostgreSQL's fast shutdown: sessions are ended, the cluster is left consistent. */
function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolvePromise) => {
    child.once('exit', () => resolvePromise());
    child.kill('SIGINT');
  });
}

/** Stops a postmaster this process did not start (so no exit event): signal, then watch the PID. */
async function stopPostmaster(pid: number): Promise<void> {
  try {
    process.kill(pid, 'SIGINT');
  } catch {
    return;
  }
  for (let waited = 0; isProcessAlive(pid); waited += 50) {
    // Fast shutdown takes well under a second; SIGQUIT is postgres's immediate shutdown.
    if (waited === 30_000) process.kill(pid, 'SIGQUIT');
    await new Promise((resolveWait) => setTimeout(resolveWait, 50));
  }
}

function connectionUrl(password: string, port: number, database: string): string {
  return `postgres://${USER}:${encodeURIComponent(password)}@127.0.0.1:${port}/${database}`;
}


/**
 * The password is generated on first start and kept in DATA_DIR (mode 0600), since initdb
 * stores only its hash.
 */
async function readOrCreatePassword(file: string, initialised: boolean): Promise<string> {
  try {
    const stored = (await readFile(file, 'utf8')).trim();
    if (stored) return stored;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  if (initialised) {
    throw new Error(`${file} is missing, so the existing cluster cannot be logged into`);
  }
  const password = randomBytes(24).toString('base64url');
  await writeFile(file, `${password}\n`, { mode: 0o600 });
  await chmod(file, 0o600);
  return password;
}

type PostmasterPid = { pid: number; port: number; status: string };

async function readPostmasterPid(pgDir: string): Promise<PostmasterPid | null> {
  let contents: string;
  try {
    contents = await readFile(join(pgDir, 'postmaster.pid'), 'utf8');
  } catch {
    return null;
  }
  // Lines: pid, data directory, start time, port, socket directory, listen address, shmem key, status.
  const lines = contents.split('\n');
  return {
    pid: Number.parseInt(lines[0] ?? '', 10),
    port: Number.parseInt(lines[3] ?? '', 10),
    status: (lines[7] ?? '').trim(),
  };
}

/**
 * The postmaster serving pgDir, or null. After a crash of postgres itself postmaster.pid
 * stays behind; postgres removes it when that pid is gone, but not when the pid has been
 * reused by another process, so it is removed whenever the pid is not a postgres on pgDir.
 */
async function runningServer(pgDir: string): Promise<{ pid: number; port: number } | null> {
  const found = await readPostmasterPid(pgDir);
  if (!found) return null;
  if (Number.isInteger(found.pid) && found.pid > 0 && (await isPostgresServing(found.pid, pgDir))) {
    if (Number.isInteger(found.port) && found.port > 0) return { pid: found.pid, port: found.port };
    throw new Error(`PostgreSQL (pid ${found.pid}) is already running on ${pgDir} on an unknown port`);
  }
  await unlink(join(pgDir, 'postmaster.pid')).catch(() => {});
  return null;
}

/** A postmaster another process is still starting says `starting` until it accepts connections. */
async function waitUntilReady(pgDir: string, pid: number): Promise<void> {
  for (let waited = 0; ; waited += 100) {
    const found = await readPostmasterPid(pgDir);
    if (found?.pid !== pid || !isProcessAlive(pid)) throw new Error(`PostgreSQL (pid ${pid}) on ${pgDir} stopped while starting`);
    if (found.status === 'ready') return;
    if (waited >= 60_000) throw new Error(`PostgreSQL (pid ${pid}) on ${pgDir} did not become ready`);
    await new Promise((resolveWait) => setTimeout(resolveWait, 100));
  }
}

async function isPostgresServing(pid: number, pgDir: string): Promise<boolean> {
  if (!isProcessAlive(pid)) return false;
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
    const found = await queryRows(client, sql`select 1 from pg_database where datname = ${database}`);
    if (found.length === 0) {
      await runSql(client, sql`create database ${rawSql(client.escapeIdentifier(database))}`);
    }
  } finally {
    await client.end();
  }
}
