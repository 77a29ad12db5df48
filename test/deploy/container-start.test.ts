// The deployment recipe without Docker: the Dockerfile's final stage is read (its ENV, USER,
// HEALTHCHECK and CMD), the files it copies are copied into a scratch directory, and its start
// command runs there as the image would run it: as a non-root user, with ROLE and
// DATABASE_URL from the environment. Its HEALTHCHECK then passes, and SIGTERM stops it cleanly.
import { spawn } from 'node:child_process';
import { chmod, chown, cp, mkdtemp, readFile, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { TEST_SECRET_KEY } from '../helpers/service.ts';
import { portOf, root } from '../foundation/service-process.ts';

type FinalStage = { env: Record<string, string>; user: string; workdir: string; copies: string[]; healthcheck: string[]; cmd: string[]; stages: number };

/** The instructions of the Dockerfile's last stage that decide how the service runs. */
function readFinalStage(dockerfile: string): FinalStage {
  const lines = dockerfile.replace(/\\\n\s*/g, ' ').split('\n').map((line) => line.trim()).filter((line) => line && !line.startsWith('#'));
  const stages = lines.filter((line) => /^FROM\s/i.test(line)).length;
  const last = lines.slice(lines.findLastIndex((line) => /^FROM\s/i.test(line)));
  const stage: FinalStage = { env: {}, user: 'root', workdir: '/', copies: [], healthcheck: [], cmd: [], stages };
  for (const line of last) {
    const [instruction, rest = ''] = [line.slice(0, line.indexOf(' ')).toUpperCase(), line.slice(line.indexOf(' ') + 1).trim()];
    if (instruction === 'ENV') for (const [, name, value] of rest.matchAll(/(\w+)=(\S+)/g)) stage.env[name!] = value!;
    if (instruction === 'USER') stage.user = rest;
    if (instruction === 'WORKDIR') stage.workdir = rest;
    if (instruction === 'COPY' && !rest.startsWith('--from')) stage.copies.push(rest.split(/\s+/)[0]!);
    if (instruction === 'HEALTHCHECK') stage.healthcheck = JSON.parse(rest.slice(rest.indexOf('CMD') + 3).trim());
    if (instruction === 'CMD') stage.cmd = JSON.parse(rest);
  }
  return stage;
}

const stage = readFinalStage(await readFile(path.join(root, 'Dockerfile'), 'utf8'));
// The base image's `node` user; as root the test runs the command as that uid, otherwise as itself.
const IMAGE_UID = 1000;
const runAs = process.getuid?.() === 0 ? { uid: IMAGE_UID, gid: IMAGE_UID } : {};

let database: TestDatabase;
let app: string;
const dataDirs: string[] = [];

beforeAll(async () => {
  database = await createTestDatabase();
  // The image's files: what the final stage copies, plus the installed dependencies.
  app = await mkdtemp(path.join(tmpdir(), 'mapi-image-'));
  await chmod(app, 0o755);
  for (const source of stage.copies) await cp(path.join(root, source), path.join(app, source), { recursive: true });
  await symlink(path.join(root, 'node_modules'), path.join(app, 'node_modules'));
});
afterAll(async () => {
  await rm(app, { recursive: true, force: true });
  for (const dir of dataDirs) await rm(dir, { recursive: true, force: true });
  await database?.drop();
});

async function imageEnv(role: string): Promise<Record<string, string>> {
  const dataDir = await mkdtemp(path.join(tmpdir(), 'mapi-image-data-'));
  dataDirs.push(dataDir);
  if (runAs.uid !== undefined) await chown(dataDir, runAs.uid, runAs.gid!);
  return {
    PATH: process.env.PATH ?? '',
    ...stage.env,
    DATA_DIR: dataDir,
    // The process picks a free port and prints it; the health check is given that one.
    PORT: '0',
    ROLE: role,
    DATABASE_URL: database.url,
    SECRET_KEY: TEST_SECRET_KEY,
    LOG_LEVEL: 'warn',
  };
}

/** The image's `node` is the Node 24 this suite runs on. */
function command(argv: string[]): [string, string[]] {
  expect(argv[0]).toBe('node');
  return [process.execPath, argv.slice(1)];
}

function run(argv: string[], env: Record<string, string>) {
  const [file, args] = command(argv);
  const child = spawn(file, args, { cwd: app, env, stdio: ['ignore', 'pipe', 'pipe'], ...runAs });
  let output = '';
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, exited, output: () => output };
}

async function waitFor(condition: () => boolean, what: string, output: () => string) {
  const deadline = Date.now() + 60_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}:\n${output()}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

test('the image is built in stages and runs as a non-root user with a health check on /v1/ready', () => {
  expect(stage.stages).toBeGreaterThanOrEqual(2);
  expect(stage.user).not.toMatch(/^(root|0)$/);
  expect(stage.cmd).toEqual(['node', 'server/main.ts']);
  expect(stage.healthcheck).toEqual(['node', 'server/healthcheck.ts']);
  expect(stage.env).toMatchObject({ NODE_ENV: 'production', HOST: '0.0.0.0' });
});

test.each(['api', 'worker'])('ROLE=%s starts from the image command as a non-root user, passes its health check and stops on SIGTERM', async (role) => {
  const env = await imageEnv(role);
  const service = run(stage.cmd, env);
  let code: number | null = null;
  void service.exited.then((exit) => (code = exit));
  await waitFor(() => /listening|worker running/.test(service.output()) || code !== null, 'the start line', service.output);
  expect(code, service.output()).toBeNull();

  const listening = /listening on (https:\/\/\S+)/.exec(service.output());
  const health = run(stage.healthcheck, listening ? { ...env, PORT: String(portOf(listening[1]!)) } : env);
  expect(await health.exited, health.output()).toBe(0);

  service.child.kill('SIGTERM');
  expect(await service.exited, service.output()).toBe(0);
  // Stopped, the same health check in the same environment (database up) fails: it looks
  // at the process of its role, and is not a check that always passes.
  const after = run(stage.healthcheck, env);
  expect(await after.exited, after.output()).toBe(1);
});

test('ROLE=worker: the health check also fails while the worker runs but its database does not answer', async () => {
  const env = await imageEnv('worker');
  const service = run(stage.cmd, env);
  let code: number | null = null;
  void service.exited.then((exit) => (code = exit));
  try {
    await waitFor(() => /worker running/.test(service.output()) || code !== null, 'the start line', service.output);
    expect(code, service.output()).toBeNull();
    const health = run(stage.healthcheck, env);
    expect(await health.exited, health.output()).toBe(0);
    const unreachable = run(stage.healthcheck, { ...env, DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none' });
    expect(await unreachable.exited, unreachable.output()).toBe(1);
  } finally {
    service.child.kill('SIGTERM');
    await service.exited;
  }
});
