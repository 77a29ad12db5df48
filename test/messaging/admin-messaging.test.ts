// The admin commands of the contract: `template:add` (a template as if synced) and
// `messaging:connect` (credentials as the account would enter them), run as the real CLI
// against the test service's database and the fake provider, which checks the credentials
// as for PUT /messaging/connection; unknown users and refused credentials print {"error"}
// and exit 1.
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startFakeMessagingProvider, type FakeMessagingProvider } from '../helpers/fake-messaging-provider.ts';
import { startTestService, TEST_SECRET_KEY, type TestService } from '../helpers/service.ts';

const root = path.resolve(import.meta.dirname, '../..');
let service: TestService;
let dataDir: string;
let fake: FakeMessagingProvider;

beforeAll(async () => {
  fake = await startFakeMessagingProvider();
  // The command's generated tokens (admin-…) reach the numbers it generates (1 and 14 digits).
  fake.grantMatching((token) => token.startsWith('admin-'), (id) => /^1\d{14}$/.test(id));
  service = await startTestService();
  dataDir = await mkdtemp(path.join(tmpdir(), 'mapi-admin-'));
});

afterAll(async () => {
  await service?.stop();
  await fake?.close();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

function admin(args: string[]): Promise<{ status: number | null; json: any }> {
  const child = spawn(process.execPath, ['server/admin/cli.ts', ...args], {
    cwd: root,
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      DATABASE_URL: service.databaseUrl,
      SECRET_KEY: TEST_SECRET_KEY,
      DATA_DIR: dataDir,
      LOG_LEVEL: 'warn',
      MESSAGING_API_URL: fake.url,
      WEBHOOK_ALLOW_HOSTS: 'localhost,127.0.0.1',
      NODE_EXTRA_CA_CERTS: process.env.NODE_EXTRA_CA_CERTS,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  child.stdout.on('data', (chunk) => (stdout += chunk));
  return new Promise((resolve) =>
    child.on('exit', (status) => {
      const lines = stdout.trim().split('\n');
      resolve({ status, json: JSON.parse(lines[lines.length - 1] || 'null') });
    }),
  );
}

describe('template:add', () => {
  test('adds a template as if synced, shown by GET /whatsapp-templates', async () => {
    const { userId, apiKey } = await service.createAccount();
    const added = await admin(['template:add', '--user', userId, '--name', 'order_ready', '--body', 'Hi {{first_name|there}}, your order is ready']);
    expect(added.status).toBe(0);
    expect(added.json).toMatchObject({ id: expect.stringMatching(/^tpl_/), name: 'order_ready', status: 'APPROVED', language: 'en', category: 'MARKETING' });
    const listed = await service.request('GET', '/whatsapp-templates', { apiKey });
    expect(listed.body.data).toEqual([
      {
        id: added.json.id,
        name: 'order_ready',
        status: 'APPROVED',
        language: 'en',
        category: 'MARKETING',
        components: [{ type: 'BODY', text: 'Hi {{first_name|there}}, your order is ready' }],
        createdAt: added.json.createdAt,
        template: expect.objectContaining({ name: 'order_ready', components: [{ type: 'BODY', text: 'Hi {{first_name|there}}, your order is ready' }] }),
      },
    ]);
  });

  test('language, category and status may be given; adding the same name and language again replaces it', async () => {
    const { userId, apiKey } = await service.createAccount();
    const first = await admin(['template:add', '--user', userId, '--name', 'promo', '--body', 'Sale!', '--language', 'es', '--category', 'UTILITY', '--status', 'PENDING']);
    expect(first.json).toMatchObject({ name: 'promo', language: 'es', category: 'UTILITY', status: 'PENDING' });
    const again = await admin(['template:add', '--user', userId, '--name', 'promo', '--body', 'Sale again!', '--language', 'es', '--status', 'APPROVED']);
    expect(again.json).toMatchObject({ id: first.json.id, status: 'APPROVED' });
    const listed = await service.request('GET', '/whatsapp-templates', { apiKey });
    expect(listed.body.data).toHaveLength(1);
  });

  test('an unknown user or a missing flag prints {"error"} and exits 1', async () => {
    const unknown = await admin(['template:add', '--user', 'usr_missing', '--name', 'x', '--body', 'y']);
    expect(unknown).toEqual({ status: 1, json: { error: 'No account usr_missing' } });
    const { userId } = await service.createAccount();
    const noBody = await admin(['template:add', '--user', userId, '--name', 'x']);
    expect(noBody).toEqual({ status: 1, json: { error: '--body is required' } });
  });
});

describe('messaging:connect', () => {
  test('stores credentials the account then reads as connected; the token is sealed', async () => {
    const { userId, apiKey } = await service.createAccount();
    fake.grant('admin-given-token', { phoneNumberId: '8080808', businessAccountId: '5050505' });
    const connected = await admin(['messaging:connect', '--user', userId, '--token', 'admin-given-token', '--phone-number-id', '8080808', '--business-account-id', '5050505']);
    expect(connected).toEqual({ status: 0, json: { userId, connected: true } });
    const status = await service.request('GET', '/messaging/connection', { apiKey });
    expect(status.body).toEqual({ success: true, data: { connected: true, phone_number_id: '8080808', business_account_id: '5050505' } });
    const row = await service.services.pool.query<{ access_token_sealed: string }>('select access_token_sealed from messaging_connections where account_id = $1', [userId]);
    expect(row.rows[0]!.access_token_sealed).not.toContain('admin-given-token');
    expect(service.services.secrets.unseal(row.rows[0]!.access_token_sealed)).toBe('admin-given-token');
  });

  test('without flags it generates a token and a phone-number id unique to the account', async () => {
    const one = await service.createAccount();
    const two = await service.createAccount();
    expect((await admin(['messaging:connect', '--user', one.userId])).json).toEqual({ userId: one.userId, connected: true });
    expect((await admin(['messaging:connect', '--user', two.userId])).json).toEqual({ userId: two.userId, connected: true });
    const first = (await service.request('GET', '/messaging/connection', { apiKey: one.apiKey })).body.data;
    const second = (await service.request('GET', '/messaging/connection', { apiKey: two.apiKey })).body.data;
    expect(first.phone_number_id).toMatch(/^\d+$/);
    expect(second.phone_number_id).toMatch(/^\d+$/);
    expect(first.phone_number_id).not.toBe(second.phone_number_id);
  });

  test('credentials the provider does not accept print {"error"} naming what failed, exit 1 and store nothing', async () => {
    const { userId, apiKey } = await service.createAccount();
    const refused = await admin(['messaging:connect', '--user', userId, '--token', 'junk-admin-token', '--phone-number-id', '9191919']);
    expect(refused.status).toBe(1);
    expect(refused.json.error).toMatch(/^The access token was refused by the messaging provider/);
    expect(JSON.stringify(refused.json)).not.toContain('junk-admin-token');
    fake.grant('token-for-another-number', { phoneNumberId: '9292929' });
    const unreachable = await admin(['messaging:connect', '--user', userId, '--token', 'token-for-another-number', '--phone-number-id', '9191919']);
    expect(unreachable.status).toBe(1);
    expect(unreachable.json.error).toMatch(/^The access token cannot reach phone_number_id 9191919 /);
    const malformed = await admin(['messaging:connect', '--user', userId, '--token', 'junk-admin-token', '--phone-number-id', '../9191919']);
    expect(malformed).toEqual({ status: 1, json: { error: "phone_number_id must be the messaging provider's id: digits only" } });
    // "." and ".." would name another path of the provider: refused before it is asked.
    const asked = fake.requests.length;
    expect(await admin(['messaging:connect', '--user', userId, '--token', 'junk-admin-token', '--phone-number-id', '..'])).toEqual({
      status: 1,
      json: { error: "phone_number_id must be the messaging provider's id: digits only" },
    });
    expect(await admin(['messaging:connect', '--user', userId, '--token', 'junk-admin-token', '--phone-number-id', '9191919', '--business-account-id', '.'])).toEqual({
      status: 1,
      json: { error: "business_account_id must be the messaging provider's id: digits only" },
    });
    expect(fake.requests.slice(asked)).toEqual([]);
    expect((await service.request('GET', '/messaging/connection', { apiKey })).body.data.connected).toBe(false);
  });

  test('an unknown user prints {"error"} and exits 1', async () => {
    expect(await admin(['messaging:connect', '--user', 'usr_missing'])).toEqual({ status: 1, json: { error: 'No account usr_missing' } });
  });
});
