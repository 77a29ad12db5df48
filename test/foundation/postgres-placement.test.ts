// As root, PostgreSQL runs as the `postgres` user, which must reach its binaries: a clone
// in a directory it cannot enter (under /root, mode 0700) gets a reachable copy of them,
// so `npm start` and the test suite's own cluster (test/global-setup.ts) work from there.
import { spawnSync } from 'node:child_process';
import { cp, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect, test } from 'vitest';
import { packagedBinaries, postgresUser, REACHABLE_BASE, reachableBinaries } from '../../server/db/postgres-placement.ts';

test.skipIf(process.getuid?.() !== 0)('binaries inside a directory the postgres user cannot enter are copied where it can run them', async () => {
  const shipped = await packagedBinaries();
  const closed = await mkdtemp(path.join(tmpdir(), 'mapi-clone-')); // mode 0700, like /root
  const nativeCopy = path.join(closed, 'native');
  await cp(path.resolve(path.dirname(shipped.postgres), '..'), nativeCopy, { recursive: true, verbatimSymlinks: true });
  const inClosed = { postgres: path.join(nativeCopy, 'bin', 'postgres'), initdb: path.join(nativeCopy, 'bin', 'initdb') };
  const user = await postgresUser();
  let reachable: Awaited<ReturnType<typeof reachableBinaries>> | undefined;
  try {
    // What `spawn initdb EACCES` was: the postgres user cannot run them where they are.
    expect(spawnSync(inClosed.initdb, ['--version'], { uid: user.uid, gid: user.gid }).error).toMatchObject({ code: 'EACCES' });

    reachable = await reachableBinaries(inClosed);
    expect(reachable.initdb.startsWith(`${REACHABLE_BASE}/`)).toBe(true);
    for (const binary of [reachable.initdb, reachable.postgres]) {
      const run = spawnSync(binary, ['--version'], { uid: user.uid, gid: user.gid, encoding: 'utf8' });
      expect(run.error).toBeUndefined();
      expect(run.stdout).toMatch(/\(PostgreSQL\) \d+/);
    }
    // The copy is made once and reused.
    expect(await reachableBinaries(inClosed)).toEqual(reachable);
  } finally {
    await rm(closed, { recursive: true, force: true });
    if (reachable) await rm(path.resolve(path.dirname(reachable.postgres), '..'), { recursive: true, force: true });
  }
});
