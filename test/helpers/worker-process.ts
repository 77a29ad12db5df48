// Worker processes (ROLE=worker) on a test's database, for the tests that kill one (SIGKILL)
// and start another: service-processes.ts with the database and configuration fixed per file.
import type { ChildProcess } from 'node:child_process';
import { serviceProcesses } from './service-processes.ts';

export type WorkerProcesses = {
  /** Starts one; resolves once it logs that the worker runs. */
  start(env?: Record<string, string>): Promise<ChildProcess>;
  /** Stops (SIGTERM) every one still running and removes their data directories. */
  stopAll(): Promise<void>;
};

export function workerProcesses(databaseUrl: () => string, baseEnv: Record<string, string> = {}): WorkerProcesses {
  const processes = serviceProcesses();
  return {
    async start(env = {}) {
      const started = await processes.spawn({ role: 'worker', databaseUrl: databaseUrl(), env: { ...baseEnv, ...env } });
      return started.child;
    },
    stopAll: () => processes.stopAll(),
  };
}
