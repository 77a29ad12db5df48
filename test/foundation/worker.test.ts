// The job worker: Graphile Worker in the same process on the same database.
// A job added inside a transaction runs after commit, and never on rollback.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import type { Task } from 'graphile-worker';
import { enqueueJob } from '../../server/jobs.ts';
import { workerDefinition } from '../../workers/index.ts';
import { startTestService, type TestService } from '../helpers/service.ts';

let service: TestService;
const ran: string[] = [];
/** What the `test-hold` task waits for before it returns. */
let holding: Promise<void> = Promise.resolve();
let holdStarted = false;

beforeAll(async () => {
  // A trivial task beside the real ones: it records the marker it was given.
  const record: Task = async (payload) => {
    ran.push((payload as { marker: string }).marker);
  };
  service = await startTestService({
    definition: {
      worker: (services) => {
        const real = workerDefinition(services);
        const hold: Task = async () => {
          holdStarted = true;
          await holding;
        };
        return { ...real, taskList: { ...real.taskList, 'test-record': record, 'test-hold': hold } };
      },
    },
  });
});
afterAll(async () => {
  await service?.stop();
});

async function waitFor(check: () => boolean | Promise<boolean>, what: string) {
  const deadline = Date.now() + 20_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

test('a job added inside a transaction runs after commit', async () => {
  const em = service.services.orm.em.fork();
  let visibleBeforeCommit = -1;
  await em.transactional(async (tx) => {
    await enqueueJob(tx, 'test-record', { marker: 'committed' });
    // Not yet visible to anyone else, so the worker cannot have taken it.
    const { rows } = await service.services.pool.query("select count(*)::int as n from graphile_worker.jobs where task_identifier = 'test-record'");
    visibleBeforeCommit = rows[0].n;
  });
  expect(visibleBeforeCommit).toBe(0);
  await waitFor(() => ran.includes('committed'), 'the committed job');
});

test('a job added inside a transaction that rolls back never runs', async () => {
  const em = service.services.orm.em.fork();
  await expect(
    em.transactional(async (tx) => {
      await enqueueJob(tx, 'test-record', { marker: 'rolled-back' });
      throw new Error('change refused');
    }),
  ).rejects.toThrow('change refused');
  // A later committed job proves the worker is polling; the rolled-back one is not there.
  await em.transactional(async (tx) => enqueueJob(tx, 'test-record', { marker: 'after' }));
  await waitFor(() => ran.includes('after'), 'the later job');
  expect(ran).not.toContain('rolled-back');
  // Nothing is left queued either: the rolled-back job never existed. (The later job may still
  // be on its way out of the table: the worker completes jobs after their task returns.)
  const { rows } = await service.services.pool.query(
    "select count(*)::int as n from graphile_worker._private_jobs j join graphile_worker._private_tasks t on t.id = j.task_id where t.identifier = 'test-record' and j.payload->>'marker' = 'rolled-back'",
  );
  expect(rows[0].n).toBe(0);
});

test('the dead-worker sweep leaves a running job alone and unlocks a dead worker\'s job', async () => {
  const pool = service.services.pool;
  let release!: () => void;
  holding = new Promise<void>((resolve) => (release = resolve));
  try {
    await enqueueJob(service.services.orm.em.fork(), 'test-hold', {});
    await waitFor(() => holdStarted, 'the held job to start');
    // Both locks look old enough to be a dead worker's: only liveness tells them apart.
    const jobOf = (task: string) =>
      `select j.id, j.locked_by from graphile_worker._private_jobs j join graphile_worker._private_tasks t on t.id = j.task_id where t.identifier = '${task}'`;
    const { rows: held } = await pool.query(`${jobOf('test-hold')}`);
    expect(held[0].locked_by).toBeTruthy();
    await pool.query("update graphile_worker._private_jobs set locked_at = now() - interval '1 minute' where id = $1", [held[0].id]);
    // A job of a worker that no longer runs: no task runs it here, so only the sweep can unlock it.
    await pool.query("select graphile_worker.add_job('test-orphan', '{}'::json)");
    await pool.query(
      `update graphile_worker._private_jobs set locked_by = 'worker-gone', locked_at = now() - interval '1 minute' where id = (select id from (${jobOf('test-orphan')}) o)`,
    );
    await waitFor(async () => (await pool.query(`${jobOf('test-orphan')}`)).rows[0].locked_by === null, 'the sweep to unlock the dead worker\'s job');
    const { rows: after } = await pool.query(`${jobOf('test-hold')}`);
    expect(after[0]?.locked_by).toBe(held[0].locked_by);
  } finally {
    release();
    await pool.query(`delete from graphile_worker._private_jobs where task_id = (select id from graphile_worker._private_tasks where identifier = 'test-orphan')`);
  }
});

test('ROLE=api starts no worker and ROLE=worker serves no HTTP', async () => {
  const api = await startTestService({ databaseUrl: service.databaseUrl, env: { ROLE: 'api' } });
  try {
    expect((await api.request('GET', '/health')).status).toBe(200);
  } finally {
    await api.stop();
  }
  const { startService } = await import('../../server/start-service.ts');
  const { loadConfig } = await import('../../server/config.ts');
  const { createLogger } = await import('../../server/log.ts');
  // Its own DATA_DIR, as every process of a scaled-out deployment has.
  const dataDir = await mkdtemp(path.join(tmpdir(), 'mapi-worker-'));
  try {
    const config = loadConfig({ DATABASE_URL: service.databaseUrl, ROLE: 'worker', DATA_DIR: dataDir, SECRET_KEY: service.services.config.SECRET_KEY, LOG_LEVEL: 'silent' });
    const worker = await startService(config, createLogger('silent'), { router: (await import('../../routers/index.ts')).appRouter, worker: workerDefinition });
    try {
      expect(worker.baseUrl).toBeNull();
    } finally {
      await worker.stop();
    }
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
});
