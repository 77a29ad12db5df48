// The servers a scenario measures: the service as `ROLE=api` processes on the bench
// database, and the bare baseline beside them.
import { createWriteStream } from 'node:fs';
import path from 'node:path';
import { Agent, request } from 'undici';
import { BENCH_SECRET_KEY } from '../database.ts';
import { freePort, root, startNode, tempDir, type NodeProcess } from '../processes.ts';

export type StartedServer = { process: NodeProcess; origin: string; dataDir: string };

/**
 * Node's arguments for a CPU profile of the process, written when it stops, into the
 * directory the variable names (BENCH_API_CPU_PROF for the service, BENCH_BARE_CPU_PROF
 * for the baseline); none when it is unset.
 */
export function cpuProfileArgs(variable: 'BENCH_API_CPU_PROF' | 'BENCH_BARE_CPU_PROF'): string[] {
  const dir = globalThis.process.env[variable];
  return dir ? ['--cpu-prof', `--cpu-prof-dir=${dir}`] : [];
}

/** BENCH_API_NODE_ARGS: Node arguments for every API process besides (`--trace-gc`, say), split at spaces. */
function extraApiArgs(): string[] {
  return globalThis.process.env.BENCH_API_NODE_ARGS?.split(' ').filter(Boolean) ?? [];
}

/** BENCH_API_OUTPUT=<dir>: each API process's output, from its start, copied to `<dir>/api-<pid>.log`. */
function keepApiOutput(started: NodeProcess): void {
  const dir = globalThis.process.env.BENCH_API_OUTPUT;
  if (!dir) return;
  const file = createWriteStream(path.join(dir, `api-${started.child.pid}.log`));
  file.write(started.output());
  started.child.stdout!.pipe(file, { end: false });
  started.child.stderr!.pipe(file, { end: false });
  started.child.once('exit', () => file.end());
}

/**
 * `node server/main.ts` with ROLE=api on the database (and `env` and Node's `nodeArgs`
 * besides); resolves when it prints its URL. `tree`: the checkout whose service runs
 * (another one compares two versions).
 */
export async function startApiProcess(databaseUrl: string, env: Record<string, string> = {}, nodeArgs: string[] = [], tree = root): Promise<StartedServer> {
  const dataDir = await tempDir('api');
  const port = await freePort();
  const process = await startNode(
    'server/main.ts',
    {
      DATABASE_URL: databaseUrl,
      PORT: String(port),
      HOST: '127.0.0.1',
      DATA_DIR: dataDir,
      SECRET_KEY: BENCH_SECRET_KEY,
      LOG_LEVEL: 'warn',
      ROLE: 'api',
      ...env,
    },
    /listening on (https:\/\/\S+)/,
    undefined,
    [...cpuProfileArgs('BENCH_API_CPU_PROF'), ...extraApiArgs(), ...nodeArgs],
    tree,
  );
  keepApiOutput(process);
  return { process, origin: new URL(process.ready[1]).origin, dataDir };
}

/** `node server/main.ts` with ROLE=worker on the database (and `env` besides), from `tree`; resolves once its runner runs. */
export async function startWorkerRole(databaseUrl: string, env: Record<string, string> = {}, tree = root): Promise<NodeProcess> {
  return startNode(
    'server/main.ts',
    { DATABASE_URL: databaseUrl, DATA_DIR: await tempDir('worker'), SECRET_KEY: BENCH_SECRET_KEY, LOG_LEVEL: 'warn', ...env, ROLE: 'worker' },
    /worker running/,
    undefined,
    [],
    tree,
  );
}

/**
 * bench/bare-server.ts on the same database, with the certificate the service generated;
 * `mode` is its BARE_MODE (`counting`: the service's own authentication statement; `two-reads`:
 * the key by its HMAC and nothing else before the contact; `silent-writes`: `counting`, plus
 * visitor messages written without any notification).
 */
export async function startBareServer(databaseUrl: string, certificateDir: string, mode: 'counting' | 'two-reads' | 'silent-writes' = 'counting'): Promise<StartedServer> {
  const port = await freePort();
  const process = await startNode(
    'bench/bare-server.ts',
    {
      DATABASE_URL: databaseUrl,
      PORT: String(port),
      SECRET_KEY: BENCH_SECRET_KEY,
      TLS_CERT_FILE: path.join(certificateDir, 'tls-cert.pem'),
      TLS_KEY_FILE: path.join(certificateDir, 'tls-key.pem'),
      BARE_MODE: mode,
    },
    /bare listening on (https:\/\/\S+)/,
    undefined,
    cpuProfileArgs('BENCH_BARE_CPU_PROF'),
  );
  return { process, origin: new URL(process.ready[1]).origin, dataDir: certificateDir };
}

const insecure = new Agent({ connect: { rejectUnauthorized: false } });

/** A JSON call to a bench server over its self-signed TLS: the body as text; a 429 is waited out, another status from 300 up throws. */
export async function callServer(origin: string, method: string, pathname: string, headers: Record<string, string>, body?: unknown): Promise<string> {
  for (;;) {
    const response = await request(origin + pathname, {
      method: method as 'GET',
      dispatcher: insecure,
      headers: { 'content-type': 'application/json', ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.body.text();
    // The bench's key may have spent its minute in an earlier scenario: wait for the next window.
    if (response.statusCode === 429) {
      await new Promise((resolve) => setTimeout(resolve, Number(response.headers['retry-after'] ?? 1) * 1000));
      continue;
    }
    if (response.statusCode >= 300) throw new Error(`${method} ${pathname}: ${response.statusCode} ${text}`);
    return text;
  }
}

/**
 * What a service process's /metrics shows (it runs with METRICS_TOKEN=token): its database
 * pool (connections open and idle, callers waiting for one), its event loop's longest stall
 * since the last scrape, and its full collections so far.
 */
export type MetricsSample = { total: number; idle: number; waiting: number; loopMaxMs: number; gcMajorMs: number; gcMajorCount: number };

export async function metricsSample(origin: string, token: string): Promise<MetricsSample> {
  const text = await callServer(origin, 'GET', '/metrics', { authorization: `Bearer ${token}` });
  const read = (state: string) => Number(new RegExp(`^db_pool_connections\\{state="${state}"\\} (\\S+)$`, 'm').exec(text)?.[1] ?? NaN);
  const value = (pattern: RegExp) => Number(pattern.exec(text)?.[1] ?? NaN);
  return {
    total: read('total'),
    idle: read('idle'),
    waiting: read('waiting'),
    // prom-client resets its loop-delay histogram at each scrape: the longest stall since the last one.
    loopMaxMs: value(/^nodejs_eventloop_lag_max_seconds (\S+)$/m) * 1000,
    gcMajorMs: value(/^nodejs_gc_duration_seconds_sum\{kind="major"\} (\S+)$/m) * 1000,
    gcMajorCount: value(/^nodejs_gc_duration_seconds_count\{kind="major"\} (\S+)$/m),
  };
}
