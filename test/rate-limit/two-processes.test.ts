// Two real server processes on one database enforce one budget.
import { fetch } from 'undici';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { insecureAgent, startTestService, type TestService } from '../helpers/service.ts';
import { serviceProcesses, type ListeningServiceProcess } from '../helpers/service-processes.ts';
import { inOneWindow } from './fresh-window.ts';

const processes = serviceProcesses();
let service: TestService;
let second: ListeningServiceProcess;

beforeAll(async () => {
  service = await startTestService();
  second = await processes.spawn({ role: 'api', databaseUrl: service.databaseUrl });
});

afterAll(async () => {
  await processes.stopAll();
  await service?.stop();
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
    const servers = [service.baseUrl, second.baseUrl];

    const statuses: number[] = [];
    for (let i = 0; i < 10; i++) statuses.push(await getLists(servers[i % 2], scoped));
    expect(statuses).toEqual(Array(10).fill(200));
    expect(await getLists(servers[0], scoped)).toBe(429);
    expect(await getLists(servers[1], scoped)).toBe(429);
  });
});
