// A REST client generated from openapi.json, as a user would make one:
// openapi-typescript writes the types, openapi-fetch calls the API with them.
// The client's calls must typecheck (apiKey is a query parameter of every
// authenticated operation, bodies and answers have the documented types) and
// work against the real service.
import { spawnSync } from 'node:child_process';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { fetch as undiciFetch } from 'undici';
import { insecureAgent, startTestService, type TestService } from '../helpers/service.ts';

const root = path.resolve(import.meta.dirname, '../..');
const codegen = path.join(root, 'test/openapi-codegen');
// Inside the repository, so the generated program resolves openapi-fetch from node_modules.
const outDir = path.join(codegen, '.generated', String(process.pid));
const require = createRequire(import.meta.url);

let service: TestService;
let account: { userId: string; apiKey: string };

beforeAll(async () => {
  service = await startTestService();
  account = await service.createAccount();
  await mkdir(outDir, { recursive: true });
});
afterAll(async () => {
  await service?.stop();
  await rm(outDir, { recursive: true, force: true });
});

/** What a user writes with the generated types; also run below. */
const CLIENT_PROGRAM = `import createClient from 'openapi-fetch';
import type { paths } from './api.ts';

export async function drive(baseUrl: string, apiKey: string, fetch: (request: Request) => Promise<Response>) {
  const client = createClient<paths>({ baseUrl, fetch });
  const created = await client.POST('/contacts', {
    params: { query: { apiKey } },
    body: { phoneNumber: '+14155550177', firstName: 'Ada', listIds: [] },
  });
  const contactId: string | undefined = created.data?.data.contactId;
  const found = await client.GET('/contacts', { params: { query: { apiKey, phoneNumber: '+14155550177' } } });
  const duplicate = await client.POST('/contacts', { params: { query: { apiKey } }, body: { phoneNumber: '+14155550177' } });
  const list = await client.POST('/lists', { params: { query: { apiKey } }, body: { name: 'Generated' } });
  const missing = await client.GET('/lists/{listId}', { params: { path: { listId: 'lst_unknown' }, query: { apiKey } } });
  const unauthorized = await client.GET('/tags', { params: { query: { apiKey: 'not-a-key' } } });
  return {
    created: { status: created.response.status, contactId },
    found: { status: found.response.status, data: found.data },
    duplicate: { status: duplicate.response.status, error: duplicate.error },
    list: { status: list.response.status, name: list.data?.data.name },
    missing: { status: missing.response.status, error: missing.error },
    unauthorized: { status: unauthorized.response.status },
  };
}
`;

test('openapi-typescript generates types from openapi.json that a program using openapi-fetch typechecks against', async () => {
  const cli = path.join(codegen, 'node_modules/openapi-typescript/bin/cli.js');
  const generated = spawnSync(process.execPath, [cli, path.join(root, 'openapi.json'), '-o', path.join(outDir, 'api.ts')], { cwd: codegen, encoding: 'utf8' });
  expect(generated.status, generated.stderr).toBe(0);
  await writeFile(path.join(outDir, 'client.ts'), CLIENT_PROGRAM);
  const tsc = path.join(path.dirname(require.resolve('typescript/package.json')), 'bin/tsc');
  const checked = spawnSync(
    process.execPath,
    [tsc, '--ignoreConfig', '--noEmit', '--strict', '--skipLibCheck', '--target', 'es2024', '--module', 'nodenext', '--moduleResolution', 'nodenext', '--allowImportingTsExtensions', '--lib', 'es2024,dom', '--types', 'node', path.join(outDir, 'client.ts')],
    { cwd: root, encoding: 'utf8' },
  );
  expect(checked.status, checked.stdout + checked.stderr).toBe(0);

  // The same program, run against the service.
  const { drive } = (await import(path.join(outDir, 'client.ts'))) as { drive: (baseUrl: string, apiKey: string, fetch: (request: Request) => Promise<Response>) => Promise<any> };
  const fetchThroughTestAgent = async (request: Request) =>
    (await undiciFetch(request.url, {
      method: request.method,
      headers: Object.fromEntries(request.headers),
      body: request.body ? await request.text() : undefined,
      dispatcher: insecureAgent,
    })) as unknown as Response;
  const outcome = await drive(service.baseUrl, account.apiKey, fetchThroughTestAgent);
  expect(outcome.created.status).toBe(200);
  expect(outcome.created.contactId).toEqual(expect.any(String));
  expect(outcome.found).toEqual({ status: 200, data: { success: true, contactId: outcome.created.contactId } });
  expect(outcome.duplicate).toEqual({ status: 409, error: { success: false, error: expect.any(String), error_code: 409 } });
  expect(outcome.list).toEqual({ status: 201, name: 'Generated' });
  expect(outcome.missing).toEqual({ status: 404, error: { success: false, error: expect.any(String), error_code: 404 } });
  expect(outcome.unauthorized.status).toBe(401);
});
