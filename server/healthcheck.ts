// The container's HEALTHCHECK. A process with an HTTP port (ROLE=api or all) is healthy when
// its own GET /v1/ready answers 200; it asks the local port over HTTPS unless TLS is
// terminated in front (TLS=off), accepting the locally generated certificate since the
// request never leaves the container. A ROLE=worker process has no port: it is healthy when
// a live service holds its DATA_DIR's lock (the worker is running; the lock names its PID
// and is removed at stop) and its database answers. It reads the environment through the
// service's own config schema, so it finds the port, TLS and DATA_DIR the service uses.
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import pg from 'pg';
import { loadConfig, type Config } from './config.ts';
import { serviceHoldingDataDir } from './data-dir-lock.ts';

const TIMEOUT_MS = 4000;

function checkReady(config: Config): void {
  const tls = config.TLS !== 'off';
  const request = tls ? httpsRequest : httpRequest;
  const headers = tls ? {} : { 'x-forwarded-proto': 'https' };
  const req = request({ host: '127.0.0.1', port: config.PORT, path: '/v1/ready', headers, rejectUnauthorized: false, timeout: TIMEOUT_MS }, (response) => {
    response.resume();
    process.exit(response.statusCode === 200 ? 0 : 1);
  });
  req.on('timeout', () => req.destroy(new Error('timed out')));
  req.on('error', () => process.exit(1));
  req.end();
}

async function checkDatabase(config: Config): Promise<void> {
  const client = new pg.Client({ connectionString: config.DATABASE_URL, connectionTimeoutMillis: TIMEOUT_MS });
  try {
    await client.connect();
    await client.query('select 1');
    process.exit(0);
  } catch {
    process.exit(1);
  }
}

async function checkWorker(config: Config): Promise<void> {
  if ((await serviceHoldingDataDir(config.DATA_DIR)) === null) process.exit(1);
  await checkDatabase(config);
}

/** An environment the service would refuse to start with is unhealthy. */
function readConfig(): Config {
  try {
    return loadConfig();
  } catch {
    process.exit(1);
  }
}

const config = readConfig();
if (config.ROLE === 'worker') await checkWorker(config);
else checkReady(config);
