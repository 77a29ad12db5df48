// The container's HEALTHCHECK. A process with an HTTP port (ROLE=api or all) is healthy when
// its own GET /v1/ready answers 200; it asks the local port over HTTPS unless TLS is
// terminated in front (TLS=off), accepting the locally generated certificate since the
// request never leaves the container. A ROLE=worker process has no port: it is healthy when
// a live service holds its DATA_DIR's lock (the worker is running; the lock names its PID
// and is removed at stop) and its database answers.
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import pg from 'pg';
import { DEFAULT_DATA_DIR, serviceHoldingDataDir } from './data-dir-lock.ts';

const TIMEOUT_MS = 4000;

function checkReady(): void {
  const port = Number(process.env.PORT ?? 3000);
  const tls = (process.env.TLS ?? 'on') !== 'off';
  const request = tls ? httpsRequest : httpRequest;
  const headers = tls ? {} : { 'x-forwarded-proto': 'https' };
  const req = request({ host: '127.0.0.1', port, path: '/v1/ready', headers, rejectUnauthorized: false, timeout: TIMEOUT_MS }, (response) => {
    response.resume();
    process.exit(response.statusCode === 200 ? 0 : 1);
  });
  req.on('timeout', () => req.destroy(new Error('timed out')));
  req.on('error', () => process.exit(1));
  req.end();
}

async function checkDatabase(): Promise<void> {
  const client = new pg.Client({ connectionString: process.env.DATABASE_URL, connectionTimeoutMillis: TIMEOUT_MS });
  try {
    await client.connect();
    await client.query('select 1');
    process.exit(0);
  } catch {
    process.exit(1);
  }
}

async function checkWorker(): Promise<void> {
  if ((await serviceHoldingDataDir(process.env.DATA_DIR || DEFAULT_DATA_DIR)) === null) process.exit(1);
  await checkDatabase();
}

if (process.env.ROLE === 'worker') await checkWorker();
else checkReady();
