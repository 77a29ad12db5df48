// `npm start` as a newcomer runs it: a real process on an embedded PostgreSQL
// under DATA_DIR, the admin CLI beside it, a second start reusing the data, a
// graceful stop on SIGTERM, and one-line refusals for bad configuration.
import { spawnSync } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { Agent, fetch } from 'undici';
import { root, serviceEnv, startServiceProcess, type ServiceProcess } from './service-process.ts';

const agent = new Agent({ connect: { rejectUnauthorized: false } });
let dataDir: string;

beforeAll(async () => {
  dataDir = await mkdtemp(path.join(tmpdir(), 'mapi-start-'));
});
afterAll(async () => {
  await rm(dataDir, { recursive: true, force: true });
});

function admin(args: string[], env: Record<string, string>, nodeOptions: string[] = []) {
  const result = spawnSync(process.execPath, [...nodeOptions, 'server/admin/cli.ts', ...args], { cwd: root, env: serviceEnv(env), encoding: 'utf8' });
  const lines = result.stdout.trim().split('\n');
  return { status: result.status, lines, json: JSON.parse(lines[lines.length - 1] ?? 'null') };
}

async function call(url: string, init: { method?: string; body?: unknown } = {}) {
  const response = await fetch(url, {
    method: init.method ?? 'GET',
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
    headers: init.body === undefined ? {} : { 'content-type': 'application/json' },
    dispatcher: agent,
  });
  return { status: response.status, body: (await response.json()) as any };
}

function postgresRunningOn(directory: string): boolean {
  const result = spawnSync('pgrep', ['-f', `postgres -D ${directory}`], { encoding: 'utf8' });
  return result.stdout.trim().length > 0;
}

/** Processes a test started, stopped after it even when it failed midway. */
const started = new Set<ServiceProcess>();
async function start(env: Record<string, string>): Promise<ServiceProcess> {
  const service = await startServiceProcess(env);
  started.add(service);
  return service;
}
afterEach(async () => {
  for (const service of started) {
    if (service.child.exitCode === null && service.child.signalCode === null) service.child.kill('SIGTERM');
    await service.exited;
  }
  started.clear();
});

// Each test starts processes that initialise or start PostgreSQL; a loaded machine needs minutes.
describe('npm start on a bare machine', { timeout: 240_000 }, () => {
  test('starts on an embedded database, serves HTTPS, works with the admin CLI, stops cleanly and reuses its data', async () => {
    const env = { DATA_DIR: dataDir, PORT: '0' };
    const first = await start(env);
    expect(first.baseUrl).toBe(`https://127.0.0.1:${first.port}/v1`);

    // The admin CLI works while the server runs, against the same database.
    const created = admin(['account:create', '--email', 'owner@example.com', '--name', 'Owner'], env);
    expect(created.status).toBe(0);
    expect(created.lines).toHaveLength(1);
    expect(created.json).toEqual({
      userId: expect.stringMatching(/^usr_/),
      apiKey: expect.stringMatching(/^mk_/),
      email: 'owner@example.com',
      plan: 'pro',
      agency: false,
      webhooks: true,
      credits: 1000,
    });
    const { apiKey } = created.json;
    const contact = await call(`${first.baseUrl}/contacts?apiKey=${apiKey}`, { method: 'POST', body: { phoneNumber: '+14155552671' } });
    expect(contact.status).toBe(200);

    first.child.kill('SIGTERM');
    expect(await first.exited).toBe(0);
    expect(postgresRunningOn(path.join(dataDir, 'pg'))).toBe(false);

    // A second start reuses the data: the same key finds the same contact.
    const second = await start(env);
    try {
      const lookup = await call(`${second.baseUrl}/contacts?apiKey=${apiKey}&phoneNumber=%2B14155552671`);
      expect(lookup.body).toEqual({ success: true, contactId: contact.body.data.contactId });
      const secretFile = await readFile(path.join(dataDir, 'secret.key'), 'utf8');
      expect(secretFile.trim().length).toBeGreaterThan(40);
    } finally {
      second.child.kill('SIGINT');
      expect(await second.exited).toBe(0);
    }

    // Works with the server stopped too.
    const updated = admin(['account:update', '--user', created.json.userId, '--plan', 'free', '--credits', '5', '--webhooks', 'off'], env);
    expect(updated.status).toBe(0);
    expect(updated.json).toEqual({ userId: created.json.userId, email: 'owner@example.com', plan: 'free', agency: false, webhooks: false, credits: 5 });
  });

  test('the admin CLI prints {"error"} and exits 1 on bad input', () => {
    const env = { DATA_DIR: dataDir };
    const missing = admin(['account:create'], env);
    expect(missing.status).toBe(1);
    expect(missing.json).toEqual({ error: expect.stringContaining('--email') });
    const unknown = admin(['account:nope'], env);
    expect(unknown.status).toBe(1);
    expect(unknown.json.error).toMatch(/unknown command/);
    const badPlan = admin(['account:create', '--email', 'x@example.com', '--plan', 'gold'], env);
    expect(badPlan.status).toBe(1);
    expect(badPlan.json.error).toMatch(/plan/);
    const noUser = admin(['account:update', '--user', 'usr_missing', '--plan', 'pro'], env);
    expect(noUser.status).toBe(1);
    expect(noUser.json.error).toMatch(/usr_missing/);
  });

  test('the admin CLI prints {"error"} and exits 1 when an error nothing catches interrupts it', () => {
    // The first outgoing connection (to PostgreSQL) raises an error in a later turn of the
    // event loop, as an 'error' event nobody listens for does.
    const injected = [
      "import net from 'node:net';",
      'const connect = net.Socket.prototype.connect;',
      'net.Socket.prototype.connect = function (...args) {',
      '  net.Socket.prototype.connect = connect;',
      "  setImmediate(() => { throw new Error('injected failure'); });",
      '  return connect.apply(this, args);',
      '};',
    ].join('\n');
    const result = admin(['account:create', '--email', 'interrupted@example.com'], { DATA_DIR: dataDir }, [
      '--import',
      `data:text/javascript,${encodeURIComponent(injected)}`,
    ]);
    expect(result.status).toBe(1);
    expect(result.lines).toEqual([JSON.stringify({ error: 'injected failure' })]);
  });

  test('a bad configuration value stops the start with one line naming the variable', () => {
    for (const [name, value] of [
      ['PORT', 'eighty'],
      ['ROLE', 'everything'],
      ['SECRET_KEY', 'short'],
      ['DATABASE_URL', 'mysql://nope'],
      ['WEBHOOK_RETRY_SCHEDULE', '1m,soon'],
    ]) {
      const result = spawnSync(process.execPath, ['server/main.ts'], { cwd: root, env: serviceEnv({ DATA_DIR: dataDir, [name]: value }), encoding: 'utf8' });
      expect(result.status, name).toBe(1);
      const lines = result.stderr.trim().split('\n');
      expect(lines, name).toHaveLength(1);
      expect(lines[0]).toContain(name);
    }
  });

  test('a port already in use stops the start with a one-line reason', async () => {
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', () => resolve()));
    const address = blocker.address();
    const port = typeof address === 'object' && address ? address.port : 0;
    try {
      const result = spawnSync(process.execPath, ['server/main.ts'], {
        cwd: root,
        env: serviceEnv({ DATA_DIR: dataDir, PORT: String(port) }),
        encoding: 'utf8',
        timeout: 60_000,
      });
      expect(result.status).toBe(1);
      expect(result.stderr.trim().split('\n')).toEqual([`cannot start: port ${port} is already in use on 127.0.0.1`]);
      expect(postgresRunningOn(path.join(dataDir, 'pg'))).toBe(false);
    } finally {
      blocker.close();
    }
  });
});
