// Two API processes on one database are one service to a client: a key's per-minute budget
// is counted in PostgreSQL, so requests spread over both processes get it once in total.
import { afterAll, beforeAll, expect, test } from 'vitest';
import { startTestService, type TestService } from '../helpers/service.ts';

const BUDGET = 30;

let a: TestService;
let b: TestService;

beforeAll(async () => {
  a = await startTestService({ env: { ROLE: 'api' } });
  b = await startTestService({ databaseUrl: a.databaseUrl, env: { ROLE: 'api' } });
});

afterAll(async () => {
  await b?.stop();
  await a?.stop();
});

const minute = async () => (await a.services.pool.query<{ m: string }>(`select date_trunc('minute', now())::text as m`)).rows[0]!.m;

test('one key spread over two API processes gets its per-minute budget once in total', async () => {
  const account = await a.createAccount();
  // A window that ends during the burst would refill the budget half-way: then try again
  // with a new key in the next window.
  for (let attempt = 0; ; attempt++) {
    const apiKey = await a.createScopedKey(account.userId, { tags: ['Lists'], rate_limit_per_min: BUDGET });
    const startedIn = await minute();
    const answers = await Promise.all(
      Array.from({ length: BUDGET * 2 }, (_, i) => (i % 2 ? b : a).request('GET', '/v1/lists', { apiKey })),
    );
    if ((await minute()) !== startedIn && attempt < 3) continue;
    const byProcess = (service: TestService) =>
      answers.filter((_, i) => (i % 2 ? b : a) === service).filter((answer) => answer.status === 200).length;
    expect(answers.map((answer) => answer.status).filter((status) => status !== 200 && status !== 429)).toEqual([]);
    expect(answers.filter((answer) => answer.status === 200)).toHaveLength(BUDGET);
    expect(answers.filter((answer) => answer.status === 429)).toHaveLength(BUDGET);
    expect(answers.every((answer) => answer.status === 200 || answer.status === 429)).toBe(true);
    // Both processes served some of the budget and refused the rest: neither kept its own count.
    expect(byProcess(a)).toBeGreaterThan(0);
    expect(byProcess(b)).toBeGreaterThan(0);
    return;
  }
});
