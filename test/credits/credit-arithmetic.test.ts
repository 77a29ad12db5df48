// Credits (spec events Credits Spent, Low Credit Balance, Credits Recharged; the monthly
// reset): what a spend may take, what it announces, and which month an account is due in.
import { describe, expect, test } from 'vitest';
import {
  agencyRecharge,
  assertCreditAmount,
  creditsRecharged,
  LOW_CREDIT_THRESHOLD,
  spendEvents,
  startOfUtcMonth,
} from '../../server/credits/credit-arithmetic.ts';

test('a spend takes a positive whole number of credits', () => {
  for (const amount of [1, 2, 1000]) expect(() => assertCreditAmount(amount)).not.toThrow();
  for (const amount of [0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY]) {
    expect(() => assertCreditAmount(amount), String(amount)).toThrow(`credits: amount must be a positive integer, got ${amount}`);
  }
});

describe('what a spend announces', () => {
  test('Credits Spent with the amount, the reason and the balance left', () => {
    expect(spendEvents(5, 60, 'template_send')).toEqual([{ name: 'Credits Spent', data: { amount: 5, reason: 'template_send', balance: 60 } }]);
  });

  test('Low Credit Balance once, when the spend takes the balance from at least 50 to below it', () => {
    expect(LOW_CREDIT_THRESHOLD).toBe(50);
    const low = (amount: number, balance: number) => spendEvents(amount, balance, 'tag_assignment').filter((event) => event.name === 'Low Credit Balance');
    expect(low(1, 49)).toEqual([{ name: 'Low Credit Balance', data: { balance: 49, threshold: 50 } }]);
    expect(low(100, 0)).toEqual([{ name: 'Low Credit Balance', data: { balance: 0, threshold: 50 } }]);
    // Ending at 50 is not low; starting below 50 was low already.
    expect(low(1, 50)).toEqual([]);
    expect(low(1, 48)).toEqual([]);
  });
});

describe('Credits Recharged', () => {
  test('carries the balance before and after and what was added, for the monthly reset as it is', () => {
    expect(creditsRecharged(100, 1100, 'monthly_reset')).toEqual({ previous: 100, credits: 1100, added: 1000, reason: 'monthly_reset' });
    expect(creditsRecharged(900, 500, 'monthly_reset')).toEqual({ previous: 900, credits: 500, added: -400, reason: 'monthly_reset' });
  });

  test('an agency setting a client balance announces it only when the balance went up', () => {
    expect(agencyRecharge(10, 25)).toEqual({ name: 'Credits Recharged', data: { previous: 10, credits: 25, added: 15, reason: 'agency_update' } });
    expect(agencyRecharge(25, 25)).toBeNull();
    expect(agencyRecharge(25, 10)).toBeNull();
  });
});

test('an account is due for the reset when last reset before the first instant of the current UTC month', () => {
  const start = (iso: string) => startOfUtcMonth(new Date(iso)).toISOString();
  expect(start('2026-03-17T09:30:00.000Z')).toBe('2026-03-01T00:00:00.000Z');
  expect(start('2026-03-01T00:00:00.000Z')).toBe('2026-03-01T00:00:00.000Z');
  expect(start('2026-02-28T23:59:59.999Z')).toBe('2026-02-01T00:00:00.000Z');
  expect(start('2025-12-31T23:59:59.999Z')).toBe('2025-12-01T00:00:00.000Z');
  expect(start('2028-02-29T12:00:00.000Z')).toBe('2028-02-01T00:00:00.000Z');
  // UTC, not the offset the instant was written with.
  expect(start('2026-04-01T01:00:00.000+02:00')).toBe('2026-03-01T00:00:00.000Z');
});
