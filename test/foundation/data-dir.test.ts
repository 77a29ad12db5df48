// Running the service on a DATA_DIR: one service per DATA_DIR (the admin CLI beside it),
// a cluster left by a crash taken over by the next start, a quiet Ctrl-C, and, as root,
// a DATA_DIR the postgres user cannot reach.
import { spawnSync } from 'node:child_process';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { Agent, fetch } from 'undici';
import { isRunning, postmasterPid, root, serviceEnv, startServiceProcess } from './service-process.ts';

const agent = new Agent({ connect: { rejectUnauthorized: false } });
let dataDir: string;

beforeAll(async () => {
  dataDir = await mkdtemp(path.join(tmpdir(), 'mapi-datadir-'));
});
afterAll(async () => {
  await rm(dataDir, { recursive: true, force: true });
});

async function ready(baseUrl: string) {
  const response = await fetch(`${baseUrl}/ready`, { dispatcher: agent });
  return { status: response.status, body: await response.json() };
}

function admin(args: string[], env: Record<string, string>) {
  const result = spawnSync(process.execPath, ['server/admin/cli.ts', ...args], { cwd: root, env: serviceEnv(env), encoding: 'utf8' });
  return { status: result.status, json: JSON.parse(result.stdout.trim().split('\n').at(-1) ?? 'null') };
}

describe('one service per DATA_DIR', () => {
  test('a second start on the same DATA_DIR exits 1 with one line naming the running one, which keeps working with the admin CLI beside it', async () => {
    const env = { DATA_DIR: dataDir };
    const first = await startServiceProcess(env);
    try {
      expect(await readFile(path.join(dataDir, 'service.pid'), 'utf8')).toBe(`${first.child.pid}\n`);
      const second = spawnSync(process.execPath, ['server/main.ts'], {
        cwd: root,
        env: serviceEnv({ DATA_DIR: dataDir }),
        encoding: 'utf8',
      });
      expect(second.status).toBe(1);
      expect(second.stderr.trim().split('\n')).toEqual([
        `cannot start: another service (pid ${first.child.pid}) is already running on DATA_DIR ${dataDir}`,
      ]);
      // The refused start left the first one's database alone.
      expect(await ready(first.baseUrl)).toEqual({ status: 200, body: { ready: true } });
      const created = admin(['account:create', '--email', 'beside@example.com'], env);
      expect(created.status).toBe(0);
      expect(await ready(first.baseUrl)).toEqual({ status: 200, body: { ready: true } });
    } finally {
      first.child.kill('SIGTERM');
      expect(await first.exited).toBe(0);
    }
    // A clean stop removes the lock.
    await expect(stat(path.join(dataDir, 'service.pid'))).rejects.toThrow();
  });

  test('after the service is killed, the next start takes over the PostgreSQL it left running and stops it on shutdown', async () => {
    const env = { DATA_DIR: dataDir };
    const crashed = await startServiceProcess(env);
    const orphan = postmasterPid(path.join(dataDir, 'pg'))!;
    crashed.child.kill('SIGKILL');
    await crashed.exited;
    expect(isRunning(orphan)).toBe(true);

    // The lock names a dead process now: stale, so the start goes ahead.
    const next = await startServiceProcess(env);
    expect(await ready(next.baseUrl)).toEqual({ status: 200, body: { ready: true } });
    next.child.kill('SIGTERM');
    expect(await next.exited).toBe(0);
    expect(isRunning(orphan)).toBe(false);
    expect(postmasterPid(path.join(dataDir, 'pg'))).toBeNull();
  });
});

describe('stopping', () => {
  test('Ctrl-C (SIGINT to the whole process group) stops the service quietly with exit 0 and stops its PostgreSQL', async () => {
    const service = await startServiceProcess({ DATA_DIR: dataDir, LOG_LEVEL: 'info' }, { detached: true });
    const postgres = postmasterPid(path.join(dataDir, 'pg'))!;
    expect(isRunning(postgres)).toBe(true);
    // What a terminal does: the signal goes to every process in the foreground group.
    process.kill(-service.child.pid!, 'SIGINT');
    expect(await service.exited).toBe(0);
    const output = `${service.stdout()}\n${service.stderr()}`.split('\n').filter(Boolean);
    expect(output.filter((line) => /error|"level":[4-6]\d/i.test(line))).toEqual([]);
    expect(isRunning(postgres)).toBe(false);
  });

  test('the start-up log names the https:// address, never http://', async () => {
    const service = await startServiceProcess({ DATA_DIR: dataDir, LOG_LEVEL: 'info' });
    service.child.kill('SIGTERM');
    expect(await service.exited).toBe(0);
    const output = `${service.stdout()}\n${service.stderr()}`;
    expect(output).toMatch(/Server listening at https:\/\/127\.0\.0\.1:/);
    expect(output).not.toMatch(/http:\/\//);
  });
});

describe.skipIf(process.getuid?.() !== 0)('as root, a DATA_DIR the postgres user cannot reach', () => {
  test('the cluster is placed where the postgres user reaches it (owned by it, mode 0700), said in one log line; password and lock stay in DATA_DIR', async () => {
    const closed = await mkdtemp(path.join(tmpdir(), 'mapi-closed-')); // mode 0700, like /root
    const closedDataDir = path.join(closed, 'data');
    const env = { DATA_DIR: closedDataDir, LOG_LEVEL: 'info' };
    let clusterDir: string | undefined;
    try {
      const service = await startServiceProcess(env);
      try {
        const placed = service.stderr().split('\n').filter((line) => line.includes('cannot reach'));
        expect(placed).toHaveLength(1);
        clusterDir = /cluster is in (\S+?)"/.exec(placed[0]!)?.[1];
        expect(clusterDir).toBeDefined();
        const info = await stat(clusterDir!);
        const postgresUid = Number(spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).stdout.trim());
        expect(info.uid).toBe(postgresUid);
        expect(info.mode & 0o777).toBe(0o700);
        expect(await readFile(path.join(closedDataDir, 'service.pid'), 'utf8')).toBe(`${service.child.pid}\n`);
        expect((await stat(path.join(closedDataDir, 'pg-password'))).isFile()).toBe(true);
        expect(await ready(service.baseUrl)).toEqual({ status: 200, body: { ready: true } });
        // The admin CLI finds the same cluster.
        expect(admin(['account:create', '--email', 'closed@example.com'], env).status).toBe(0);
      } finally {
        service.child.kill('SIGTERM');
        expect(await service.exited).toBe(0);
      }
      expect(postmasterPid(clusterDir!)).toBeNull();
    } finally {
      await rm(closed, { recursive: true, force: true });
      if (clusterDir) await rm(clusterDir, { recursive: true, force: true });
    }
  });
});
