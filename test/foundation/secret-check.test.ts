// Every instance of a deployment must share SECRET_KEY; a start with another
// secret on the same database is refused with a one-line reason.
import { afterAll, beforeAll, expect, test } from 'vitest';
import { StartError } from '../../server/start-service.ts';
import { startTestService, type TestService } from '../helpers/service.ts';

let service: TestService;
beforeAll(async () => {
  service = await startTestService();
});
afterAll(async () => {
  await service?.stop();
});

test('a second instance with a different SECRET_KEY is refused', async () => {
  const attempt = startTestService({ databaseUrl: service.databaseUrl, env: { SECRET_KEY: 'another-secret-key-that-is-long-enough-to-pass' } });
  await expect(attempt).rejects.toThrow(StartError);
  await expect(attempt).rejects.toThrow(/SECRET_KEY differs/);
});

test('a second instance with the same SECRET_KEY starts and accepts the same keys', async () => {
  const { apiKey } = await service.createAccount();
  const second = await startTestService({ databaseUrl: service.databaseUrl });
  try {
    expect((await second.request('GET', '/lists', { apiKey })).status).toBe(200);
  } finally {
    await second.stop();
  }
});
