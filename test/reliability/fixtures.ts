// What the reliability tests share: `node server/main.ts` child processes on a test's
// database (each with its own port and DATA_DIR), a plain HTTPS client with a time-out for
// them, and bounded waits.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fetch } from 'undici';
import { startServiceProcess, type ServiceProcess } from '../foundation/service-process.ts';
import { insecureAgent, TEST_SECRET_KEY } from '../helpers/service.ts';

export type ChildService = ServiceProcess & { dataDir: string; origin: string };

/**
 * Starts `node server/main.ts` on `databaseUrl` (ROLE=all unless `env` says otherwise) and
 * resolves once it listens. `dataDir` reuses a DATA_DIR (a restart after a crash).
 */
export async function startChildService(databaseUrl: string, env: Record<string, string> = {}, dataDir?: string): Promise<ChildService> {
  const dir = dataDir ?? (await mkdtemp(path.join(tmpdir(), 'mapi-rel-')));
  const started = await startServiceProcess({
    DATABASE_URL: databaseUrl,
    DATA_DIR: dir,
    SECRET_KEY: TEST_SECRET_KEY,
    HOST: '127.0.0.1',
    ...env,
  });
  return { ...started, dataDir: dir, origin: new URL(started.baseUrl).origin };
}

/** SIGKILLs the process (if it still runs) and waits for its exit. */
export async function killHard(child: ServiceProcess['child']): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGKILL');
  await exited;
}

/** Stops (SIGTERM) a child service still running and removes its DATA_DIR. */
export async function stopChildService(service: ChildService | undefined): Promise<void> {
  if (!service) return;
  const { child } = service;
  if (child.exitCode === null && child.signalCode === null) {
    child.kill('SIGTERM');
    await service.exited;
  }
  await rm(service.dataDir, { recursive: true, force: true });
}

export type Answer = { status: number; body: any; text: string; headers: Headers };

/**
 * One request to `origin` + `pathname` (`/v1/...`); rejects when no complete answer arrives
 * within `timeoutMs` (the failure condition of the fault tests, never a timing assertion).
 */
export async function call(
  origin: string,
  method: string,
  pathname: string,
  options: { apiKey?: string; query?: Record<string, string>; headers?: Record<string, string>; body?: unknown; timeoutMs?: number } = {},
): Promise<Answer> {
  const url = new URL(origin + pathname);
  if (options.apiKey) url.searchParams.set('apiKey', options.apiKey);
  for (const [name, value] of Object.entries(options.query ?? {})) url.searchParams.set(name, value);
  const response = await fetch(url, {
    method,
    headers: { ...options.headers, ...(options.body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: options.body === undefined ? undefined : JSON.stringify(options.body),
    dispatcher: insecureAgent,
    signal: AbortSignal.timeout(options.timeoutMs ?? 20_000),
  });
  const text = await response.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  return { status: response.status, body, text, headers: response.headers as unknown as Headers };
}

/** Polls `check` until it returns a value (not undefined); throws naming `what` after `timeoutMs`. */
export async function waitFor<T>(check: () => Promise<T | undefined>, what: string, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined) return value;
    } catch (error) {
      lastError = error;
    }
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}${lastError ? ` (last error: ${(lastError as Error).message})` : ''}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** A distinct E.164 number per index within a test file. */
export function phone(index: number): string {
  return `+1415${String(3_000_000 + index)}`;
}
