// Two API processes on one database are one service to a client: a key's per-minute budget
// is counted in PostgreSQL, so requests spread over both processes get it once in total.
// Both are real OS processes (nothing shared but the database); the in-process service only
// makes the account and key and reads the database clock.
import { afterAll, beforeAll, expect, test } from 'vitest';
import { startTestService, type TestService } from '../helpers/service.ts';
import { serviceProcesses, type ListeningServiceProcess } from '../helpers/service-processes.ts';
import { call, type Answer } from './fixtures.ts';

const BUDGET = 30;

const processes = serviceProcesses();
let fixtures: TestService;
let a: ListeningServiceProcess;
let b: ListeningServiceProcess;

beforeAll(async () => {
  fixtures = await startTestService({ env: { ROLE: 'api' } });
  [a, b] = await Promise.all([
    processes.spawn({ role: 'api', databaseUrl: fixtures.databaseUrl }),
    processes.spawn({ role: 'api', databaseUrl: fixtures.databaseUrl }),
  ]);
});

afterAll(async () => {
  await processes.stopAll();
  await fixtures?.stop();
});

const minute = async () => (await fixtures.services.pool.query<{ m: string }>(`select date_trunc('minute', now())::text as m`)).rows[0]!.m;

test('one key spread over two API processes gets its per-minute budget once in total', async () => {
  const account = await fixtures.createAccount();
  // A window that ends during the burst would refill the budget half-way: then try again
  // with a new key in the next window.
  for (let attempt = 0; ; attempt++) {
    const apiKey = await fixtures.createScopedKey(account.userId, { tags: ['Lists'], rate_limit_per_min: BUDGET });
    const startedIn = await minute();
    const servedBy = (i: number) => (i % 2 ? b : a);
    const answers: Answer[] = await Promise.all(Array.from({ length: BUDGET * 2 }, (_, i) => call(servedBy(i).origin, 'GET', '/v1/lists', { apiKey })));
    if ((await minute()) !== startedIn && attempt < 3) continue;
    const byProcess = (service: ListeningServiceProcess) =>
      answers.filter((_, i) => servedBy(i) === service).filter((answer) => answer.status === 200).length;
    expect(answers.map((answer) => answer.status).filter((status) => status !== 200 && status !== 429)).toEqual([]);
    expect(answers.filter((answer) => answer.status === 200)).toHaveLength(BUDGET);
    expect(answers.filter((answer) => answer.status === 429)).toHaveLength(BUDGET);
    // Both processes served some of the budget and refused the rest: neither kept its own count.
    expect(byProcess(a)).toBeGreaterThan(0);
    expect(byProcess(b)).toBeGreaterThan(0);
    return;
  }
});
