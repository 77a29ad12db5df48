// `node server/main.ts` with ROLE=worker as a real child process on a test's database, for
// the tests that kill a worker (SIGKILL) and start another one.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { TEST_SECRET_KEY } from './service.ts';

const root = path.resolve(import.meta.dirname, '../..');

export type WorkerProcesses = {
  /** Starts one; resolves once it logs that the worker runs. */
  start(env?: Record<string, string>): Promise<ChildProcess>;
  /** Stops (SIGTERM) every one still running and removes their data directories. */
  stopAll(): Promise<void>;
};

export function workerProcesses(databaseUrl: () => string, baseEnv: Record<string, string> = {}): WorkerProcesses {
  const started: { child: ChildProcess; dataDir: string }[] = [];
  return {
    async start(env = {}) {
      const dataDir = await mkdtemp(path.join(tmpdir(), 'mapi-worker-'));
      const child = spawn(process.execPath, ['server/main.ts'], {
        cwd: root,
        env: {
          PATH: process.env.PATH,
          HOME: process.env.HOME,
          // Loopback receivers and fakes have certificates signed by the run's test CA.
          NODE_EXTRA_CA_CERTS: process.env.NODE_EXTRA_CA_CERTS,
          DATABASE_URL: databaseUrl(),
          SECRET_KEY: TEST_SECRET_KEY,
          DATA_DIR: dataDir,
          ROLE: 'worker',
          LOG_LEVEL: 'warn',
          ...baseEnv,
          ...env,
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      started.push({ child, dataDir });
      let output = '';
      await new Promise<void>((resolve, reject) => {
        const onData = (chunk: Buffer) => {
          output += chunk.toString();
          if (output.includes('worker running')) resolve();
        };
        child.stdout!.on('data', onData);
        child.stderr!.on('data', onData);
        child.once('exit', (code, signal) => reject(new Error(`worker exited (${code ?? signal}): ${output}`)));
      });
      return child;
    },
    async stopAll() {
      for (const { child, dataDir } of started.splice(0)) {
        if (child.exitCode === null && child.signalCode === null) {
          const exited = new Promise((resolve) => child.once('exit', resolve));
          child.kill('SIGTERM');
          await exited;
        }
        await rm(dataDir, { recursive: true, force: true });
      }
    },
  };
}
