// Jobs of a dead worker process are handed on within seconds, not the 4 hours after which
// Graphile Worker itself gives up on a lock. Each Graphile worker pool (it locks the jobs it
// fetches in its own name) and each worker of it holds a session-level advisory lock named
// after its id on one connection of its process; a process killed outright loses that session and so its locks. Every worker
// process sweeps now and then: a job or queue locked by a worker id whose advisory lock
// nobody holds belongs to a dead worker and is unlocked (force_unlock_workers), so any
// worker takes it up again. The database is the only witness; no clocks are compared.
import pg from 'pg';
import type { Logger } from 'pino';
import { queryRows, runSql, sql, type Sql } from './db/sql.ts';

/** First key of the advisory locks (the second is hashtext(worker id)); any constant unused elsewhere. */
const NAMESPACE = 727_274_002;
/** A lock taken this recently may belong to a worker whose advisory lock is still being taken. */
const GRACE_SECONDS = 5;
const SWEEP_INTERVAL_MS = 3000;

export type WorkerLiveness = {
  /** A worker of this process started / stopped (Graphile Worker's worker:create, worker:stop). */
  add(workerId: string): void;
  remove(workerId: string): void;
  /** Connects and starts sweeping. */
  start(): Promise<void>;
  stop(): Promise<void>;
};

export function createWorkerLiveness(options: { databaseUrl: string; pool: pg.Pool; log: Logger }): WorkerLiveness {
  const { pool, log } = options;
  const ids = new Set<string>();
  let client: pg.Client | null = null;
  let connecting: Promise<pg.Client> | null = null;
  let timer: NodeJS.Timeout | null = null;
  let sweeping: Promise<void> | null = null;
  let stopped = false;

  // One statement at a time on the session (pg refuses to queue them itself from pg@9).
  let queue: Promise<unknown> = Promise.resolve();
  const onSession = (session: pg.Client, statement: Sql) => {
    const run = () => runSql(session, statement);
    const result = queue.then(run, run);
    queue = result.catch(() => {});
    return result;
  };
  const lock = (session: pg.Client, id: string) => onSession(session, sql`select pg_try_advisory_lock(${NAMESPACE}, hashtext(${id}))`);

  /** The session holding this process's locks; a new one (taking them all again) after it was lost. */
  const session = (): Promise<pg.Client> => {
    if (client) return Promise.resolve(client);
    connecting ??= (async () => {
      const next = new pg.Client({ connectionString: options.databaseUrl, application_name: 'worker-liveness' });
      const lost = () => {
        if (client === next) client = null;
        next.end().catch(() => {});
      };
      next.on('error', (error) => {
        log.warn({ err: error }, 'worker liveness connection lost');
        lost();
      });
      next.on('end', lost);
      try {
        await next.connect();
        for (const id of ids) await lock(next, id);
      } catch (error) {
        lost();
        throw error;
      }
      client = next;
      return next;
    })().finally(() => (connecting = null));
    return connecting;
  };

  const sweep = async () => {
    // Only with this process's own locks in place, or its own running jobs would look dead.
    await session();
    const rows = await queryRows<{ id: string }>(
      pool,
      sql`with locked as (
         select locked_by as id, locked_at from graphile_worker._private_jobs where locked_by is not null
         union all
         select locked_by, locked_at from graphile_worker._private_job_queues where locked_by is not null
       )
       select distinct id from locked
        where locked_at < now() - make_interval(secs => ${GRACE_SECONDS})
          and not exists (
            select 1 from pg_locks l
             where l.locktype = 'advisory' and l.granted and l.objsubid = 2
               and l.database = (select oid from pg_database where datname = current_database())
               and l.classid = ${NAMESPACE}::int4::oid and l.objid = hashtext(locked.id)::oid)`,
    );
    if (!rows.length) return;
    const dead = rows.map((row) => row.id);
    await runSql(pool, sql`select graphile_worker.force_unlock_workers(${dead}::text[])`);
    log.warn({ workerIds: dead }, 'unlocked the jobs of workers that are no longer running');
  };

  const tick = () => {
    if (stopped || sweeping) return;
    sweeping = sweep()
      .catch((error: unknown) => log.warn({ err: error }, 'sweeping dead workers failed; retrying'))
      .finally(() => (sweeping = null));
  };

  return {
    add(id) {
      ids.add(id);
      if (client) lock(client, id).catch(() => {});
      else connecting?.then((next) => lock(next, id)).catch(() => {});
    },
    remove(id) {
      ids.delete(id);
      if (client) onSession(client, sql`select pg_advisory_unlock(${NAMESPACE}, hashtext(${id}))`).catch(() => {});
    },
    async start() {
      await session();
      tick();
      timer = setInterval(tick, SWEEP_INTERVAL_MS);
      timer.unref();
    },
    async stop() {
      stopped = true;
      if (timer) clearInterval(timer);
      await sweeping;
      await connecting?.catch(() => {});
      const current = client;
      client = null;
      await current?.end().catch(() => {});
    },
  };
}
