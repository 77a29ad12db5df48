// Configuration: one module validates every variable; docs/operating.md documents each one.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { expect, test } from 'vitest';
import { configSchema, ConfigError, loadConfig } from '../../server/config.ts';

test('defaults match the contract', () => {
  const config = loadConfig({});
  expect(config).toMatchObject({
    PORT: 3000,
    HOST: '127.0.0.1',
    DATA_DIR: '.data',
    TLS: 'on',
    ROLE: 'all',
    WEBHOOK_RETRY_SCHEDULE: [60_000, 300_000, 1_800_000, 7_200_000],
    WEBHOOK_DISABLE_AFTER: 5,
    WEBHOOK_TIMEOUT_MS: 10_000,
    LOG_LEVEL: 'info',
  });
  expect(config.DATABASE_URL).toBeUndefined();
});

test('a bad value is refused with a message naming the variable', () => {
  const cases: [string, string][] = [
    ['PORT', '70000'],
    ['TLS', 'maybe'],
    ['LOG_LEVEL', 'loud'],
    ['OIDC_JWKS_URL', 'not a url'],
    ['WEBHOOK_TIMEOUT_MS', 'soon'],
  ];
  for (const [name, value] of cases) {
    expect(() => loadConfig({ [name]: value }), name).toThrow(ConfigError);
    expect(() => loadConfig({ [name]: value }), name).toThrow(new RegExp(`^invalid ${name}:`));
  }
});

test('MESSAGING_API_URL must be https://, loopback included, since provider calls go only over HTTPS', () => {
  for (const value of ['http://graph.example.com/v21.0', 'http://127.0.0.1:8443/v21.0', 'http://localhost:8443/v21.0', 'http://[::1]:8443/v21.0', 'ftp://graph.example.com/']) {
    expect(() => loadConfig({ MESSAGING_API_URL: value }), value).toThrow(
      new ConfigError('invalid MESSAGING_API_URL: must be an https:// URL: the service calls it only over HTTPS'),
    );
  }
  expect(loadConfig({ MESSAGING_API_URL: 'https://127.0.0.1:8443/v21.0' }).MESSAGING_API_URL).toBe('https://127.0.0.1:8443/v21.0');
  expect(loadConfig({}).MESSAGING_API_URL).toBe('https://graph.facebook.com/v21.0');
});

test('settings that only make sense together are checked together', () => {
  expect(() => loadConfig({ TLS_CERT_FILE: '/x.pem' })).toThrow(/TLS_KEY_FILE/);
  expect(() => loadConfig({ TLS: 'off' })).toThrow(/TRUST_PROXY/);
  expect(() => loadConfig({ OIDC_ISSUER: 'https://id.example.com' })).toThrow(/OIDC/);
  expect(loadConfig({ TLS: 'off', TRUST_PROXY: '10.0.0.1, 10.0.0.2' }).TRUST_PROXY).toEqual(['10.0.0.1', '10.0.0.2']);
});

test('docs/operating.md documents every configuration variable', async () => {
  const guide = await readFile(path.resolve(import.meta.dirname, '../../docs/operating.md'), 'utf8');
  const table = guide.slice(guide.indexOf('## Configuration'));
  for (const name of Object.keys(configSchema.shape)) expect(table, name).toContain(`\`${name}\``);
});

test('DATABASE_POOL_SIZE sizes each process pool: 10 unless set, a whole number from 2', () => {
  expect(loadConfig({}).DATABASE_POOL_SIZE).toBe(10);
  expect(loadConfig({ DATABASE_POOL_SIZE: '24' }).DATABASE_POOL_SIZE).toBe(24);
  for (const value of ['1', '2.5', 'many']) expect(() => loadConfig({ DATABASE_POOL_SIZE: value }), value).toThrow(/^invalid DATABASE_POOL_SIZE:/);
});

test('WEBHOOK_HISTORY_DAYS keeps 30 days unless set, a whole number of days from 1 to 3650', () => {
  expect(loadConfig({}).WEBHOOK_HISTORY_DAYS).toBe(30);
  expect(loadConfig({ WEBHOOK_HISTORY_DAYS: '3650' }).WEBHOOK_HISTORY_DAYS).toBe(3650);
  for (const value of ['0', '3651', '1.5', 'forever']) expect(() => loadConfig({ WEBHOOK_HISTORY_DAYS: value }), value).toThrow(/^invalid WEBHOOK_HISTORY_DAYS:/);
});
