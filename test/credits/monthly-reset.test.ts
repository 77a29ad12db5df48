// The monthly credit reset: the domain function directly, and once through
// the Graphile Worker task the crontab runs. Its own database, because the
// reset touches every account that is due.
import { afterAll, beforeAll, expect, test, vi } from 'vitest';
import { startOfUtcMonth } from '../../server/credits/credit-arithmetic.ts';
import { resetMonthlyCredits } from '../../server/credits/reset-monthly-credits.ts';
import { enqueueJob } from '../../server/jobs.ts';
import { RESET_MONTHLY_CREDITS_TASK } from '../../workers/reset-monthly-credits.ts';
import { startTestService, type TestService } from '../helpers/service.ts';

let service: TestService;
beforeAll(async () => {
  service = await startTestService();
});
afterAll(async () => {
  await service?.stop();
});

type Limits = { monthly_credits: number; monthly_credits_used: number; credits: number; roll_over_to_next_month: boolean; last_reset_ms: number };

async function limitsOf(accountId: string): Promise<Limits> {
  const { rows } = await service.services.pool.query<Limits>(
    `select monthly_credits, monthly_credits_used, credits, roll_over_to_next_month,
            (extract(epoch from last_reset_date) * 1000)::float8 as last_reset_ms
       from accounts where id = $1`,
    [accountId],
  );
  return rows[0]!;
}

async function setLimits(accountId: string, limits: Omit<Limits, 'last_reset_ms'> & { last_reset_date: Date }): Promise<void> {
  await service.services.pool.query(
    `update accounts set monthly_credits = $2, monthly_credits_used = $3, credits = $4, roll_over_to_next_month = $5, last_reset_date = $6
      where id = $1`,
    [accountId, limits.monthly_credits, limits.monthly_credits_used, limits.credits, limits.roll_over_to_next_month, limits.last_reset_date],
  );
}

async function rechargedEvents(accountId: string): Promise<{ payload: { user: { id: string }; data: Record<string, unknown> } }[]> {
  const { rows } = await service.services.pool.query(
    `select payload from events where account_id = $1 and name = 'Credits Recharged' order by created_at, id`,
    [accountId],
  );
  return rows;
}

test('accounts last reset before the start of the month get monthly_credits (plus the balance when rolling over); the rest are untouched; a second run changes nothing', async () => {
  const now = new Date();
  const monthStart = startOfUtcMonth(now);
  const lastMonth = new Date(monthStart.getTime() - 5 * 24 * 3600 * 1000);
  const justBefore = new Date(monthStart.getTime() - 1);

  const replace = await service.createAccount();
  const rollOver = await service.createAccount();
  const alreadyReset = await service.createAccount();
  await setLimits(replace.userId, { monthly_credits: 100, monthly_credits_used: 70, credits: 30, roll_over_to_next_month: false, last_reset_date: lastMonth });
  await setLimits(rollOver.userId, { monthly_credits: 100, monthly_credits_used: 70, credits: 30, roll_over_to_next_month: true, last_reset_date: justBefore });
  await setLimits(alreadyReset.userId, { monthly_credits: 100, monthly_credits_used: 70, credits: 30, roll_over_to_next_month: false, last_reset_date: monthStart });

  expect(await resetMonthlyCredits(service.services.orm.em.fork(), now)).toBe(2);

  expect(await limitsOf(replace.userId)).toEqual({ monthly_credits: 100, monthly_credits_used: 0, credits: 100, roll_over_to_next_month: false, last_reset_ms: now.getTime() });
  expect(await limitsOf(rollOver.userId)).toEqual({ monthly_credits: 100, monthly_credits_used: 0, credits: 130, roll_over_to_next_month: true, last_reset_ms: now.getTime() });
  expect(await limitsOf(alreadyReset.userId)).toEqual({
    monthly_credits: 100,
    monthly_credits_used: 70,
    credits: 30,
    roll_over_to_next_month: false,
    last_reset_ms: monthStart.getTime(),
  });

  const replaced = await rechargedEvents(replace.userId);
  expect(replaced).toHaveLength(1);
  expect(replaced[0]!.payload).toMatchObject({ user: { id: replace.userId }, data: { previous: 30, credits: 100, added: 70, reason: 'monthly_reset' } });
  const rolled = await rechargedEvents(rollOver.userId);
  expect(rolled).toHaveLength(1);
  expect(rolled[0]!.payload.data).toEqual({ previous: 30, credits: 130, added: 100, reason: 'monthly_reset' });
  expect(await rechargedEvents(alreadyReset.userId)).toEqual([]);

  // Idempotent within the month.
  expect(await resetMonthlyCredits(service.services.orm.em.fork(), new Date(now.getTime() + 1000))).toBe(0);
  expect((await limitsOf(rollOver.userId)).credits).toBe(130);
  expect(await rechargedEvents(rollOver.userId)).toHaveLength(1);
});

test('the reset-monthly-credits worker task resets due accounts', async () => {
  const monthStart = startOfUtcMonth(new Date());
  const due = await service.createAccount();
  await setLimits(due.userId, {
    monthly_credits: 200,
    monthly_credits_used: 150,
    credits: 50,
    roll_over_to_next_month: false,
    last_reset_date: new Date(monthStart.getTime() - 24 * 3600 * 1000),
  });

  await service.services.orm.em.fork().transactional((tx) => enqueueJob(tx, RESET_MONTHLY_CREDITS_TASK, {}));

  await vi.waitFor(
    async () => {
      expect((await limitsOf(due.userId)).last_reset_ms).toBeGreaterThanOrEqual(monthStart.getTime());
    },
    { timeout: 30_000, interval: 100 },
  );
  expect(await limitsOf(due.userId)).toMatchObject({ monthly_credits_used: 0, credits: 200 });
  expect(await rechargedEvents(due.userId)).toHaveLength(1);
});
