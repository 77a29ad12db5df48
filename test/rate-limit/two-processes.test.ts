// Two real server processes on one database enforce one budget.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fetch } from 'undici';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { insecureAgent, startTestService, TEST_SECRET_KEY, type TestService } from '../helpers/service.ts';
import { inOneWindow } from './fresh-window.ts';

const root = path.resolve(import.meta.dirname, '../..');

let service: TestService;
let second: ChildProcess | undefined;
let secondBaseUrl: string;
let dataDir: string;

beforeAll(async () => {
  service = await startTestService();
  dataDir = await mkdtemp(path.join(tmpdir(), 'mapi-second-'));
  second = spawn(process.execPath, ['server/main.ts'], {
    cwd: root,
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      DATABASE_URL: service.databaseUrl,
      // It picks a free port itself and names it in its start line.
      PORT: '0',
      HOST: '127.0.0.1',
      SECRET_KEY: TEST_SECRET_KEY,
      DATA_DIR: dataDir,
      ROLE: 'api',
      LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  secondBaseUrl = await new Promise<string>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const match = /listening on (https:\/\/\S+)/.exec(output);
      if (match) resolve(match[1]);
    };
    second!.stdout!.on('data', onData);
    second!.stderr!.on('data', onData);
    second!.once('exit', (code) => reject(new Error(`second server exited with ${code}: ${output}`)));
  });
});

afterAll(async () => {
  if (second && second.exitCode === null) {
    const exited = new Promise((resolve) => second!.once('exit', resolve));
    second.kill('SIGTERM');
    await exited;
  }
  await service?.stop();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

async function getLists(baseUrl: string, apiKey: string): Promise<number> {
  const url = new URL(`${baseUrl}/lists`);
  url.searchParams.set('apiKey', apiKey);
  const response = await fetch(url, { dispatcher: insecureAgent });
  await response.text();
  return response.status;
}

test('two server processes on one database enforce one budget: the 11th request of a 10-per-minute key gets 429, whichever process serves it', async () => {
  await inOneWindow(service.services.pool, async () => {
    const { apiKey } = await service.createAccount();
    const created = await service.request('POST', '/api-keys', { apiKey, body: { scopes: { tags: ['Lists'], rate_limit_per_min: 10 } } });
    const scoped = created.body.api_key as string;
    const servers = [service.baseUrl, secondBaseUrl];

    const statuses: number[] = [];
    for (let i = 0; i < 10; i++) statuses.push(await getLists(servers[i % 2], scoped));
    expect(statuses).toEqual(Array(10).fill(200));
    expect(await getLists(servers[0], scoped)).toBe(429);
    expect(await getLists(servers[1], scoped)).toBe(429);
  });
});
