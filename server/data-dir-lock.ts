// One service per DATA_DIR: a lock file holding the service's PID, taken at start and
// removed at stop. A lock whose PID is dead was left by a crash and is taken over.
import { mkdir, open, readFile, unlink } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { isProcessAlive } from './process-alive.ts';

export const LOCK_FILE = 'service.pid';
/** DATA_DIR when the environment does not set it (config.ts and the health check share it). */
export const DEFAULT_DATA_DIR = '.data';

export class DataDirLockedError extends Error {
  override name = 'DataDirLockedError';
  readonly holderPid: number;
  constructor(dataDir: string, holderPid: number) {
    super(`another service (pid ${holderPid}) is already running on DATA_DIR ${dataDir}`);
    this.holderPid = holderPid;
  }
}

export type DataDirLock = { release(): Promise<void> };

// The lock guards against other processes. Within one process several services may share a
// DATA_DIR (the test suite runs API and worker roles side by side), so it is counted here.
const heldInThisProcess = new Map<string, number>();

export async function lockDataDir(dataDir: string): Promise<DataDirLock> {
  const dir = resolve(dataDir);
  await mkdir(dir, { recursive: true });
  const file = join(dir, LOCK_FILE);
  const held = heldInThisProcess.get(dir) ?? 0;
  if (held === 0) await createLockFile(file, dir);
  heldInThisProcess.set(dir, held + 1);

  let released = false;
  return {
    async release() {
      if (released) return;
      released = true;
      const remaining = (heldInThisProcess.get(dir) ?? 1) - 1;
      if (remaining > 0) {
        heldInThisProcess.set(dir, remaining);
        return;
      }
      heldInThisProcess.delete(dir);
      if ((await readLockPid(file)) === process.pid) await unlink(file).catch(() => {});
    },
  };
}

/** The PID of the live service holding DATA_DIR's lock, or null when none does. */
export async function serviceHoldingDataDir(dataDir: string): Promise<number | null> {
  const pid = await readLockPid(join(resolve(dataDir), LOCK_FILE));
  return pid !== null && isProcessAlive(pid) ? pid : null;
}

async function createLockFile(file: string, dir: string): Promise<void> {
  // Two attempts: the second follows the removal of a lock left by a dead process.
  for (let attempt = 0; attempt < 2; attempt += 1) {
    try {
      const handle = await open(file, 'wx', 0o644);
      try {
        await handle.writeFile(`${process.pid}\n`);
      } finally {
        await handle.close();
      }
      return;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const holder = await readLockPid(file);
    if (holder !== null && holder !== process.pid && isProcessAlive(holder)) throw new DataDirLockedError(dir, holder);
    await unlink(file).catch(() => {});
  }
  throw new Error(`could not lock DATA_DIR ${dir}: ${file} keeps reappearing`);
}

async function readLockPid(file: string): Promise<number | null> {
  try {
    const pid = Number.parseInt((await readFile(file, 'utf8')).trim(), 10);
    return Number.isInteger(pid) && pid > 0 ? pid : null;
  } catch {
    return null;
  }
}
