// Credit rules decided without the database: what a spend may take, the events a spend
// announces, the Credits Recharged payload, and the month a reset belongs to. The statements
// that move balances are in spend-credits.ts and reset-monthly-credits.ts.
import type { EventName } from '../events/event-names.ts';

/** A balance below this many credits is low; `Low Credit Balance` is emitted when a spend crosses it. */
export const LOW_CREDIT_THRESHOLD = 50;

/** Why credits were spent, as carried in the `Credits Spent` payload. */
export type SpendReason = 'tag_assignment' | (string & {});

export type CreditEvent = { name: EventName; data: Record<string, unknown> };

export function assertCreditAmount(amount: number): void {
  if (!Number.isInteger(amount) || amount <= 0) throw new Error(`credits: amount must be a positive integer, got ${amount}`);
}

/** What a spend of `amount` leaving `balance` announces: Credits Spent, and Low Credit Balance when it crossed the threshold. */
export function spendEvents(amount: number, balance: number, reason: SpendReason): CreditEvent[] {
  const events: CreditEvent[] = [{ name: 'Credits Spent', data: { amount, reason, balance } }];
  const previous = balance + amount;
  if (previous >= LOW_CREDIT_THRESHOLD && balance < LOW_CREDIT_THRESHOLD) {
    events.push({ name: 'Low Credit Balance', data: { balance, threshold: LOW_CREDIT_THRESHOLD } });
  }
  return events;
}

/** The `Credits Recharged` payload of a balance going from `previous` to `credits`. */
export function creditsRecharged(previous: number, credits: number, reason: 'monthly_reset' | 'agency_update'): Record<string, unknown> {
  return { previous, credits, added: credits - previous, reason };
}

/** An agency setting a client's balance announces it only when it raised the balance. */
export function agencyRecharge(previous: number, credits: number): CreditEvent | null {
  return credits > previous ? { name: 'Credits Recharged', data: creditsRecharged(previous, credits, 'agency_update') } : null;
}

/** The first instant of `now`'s UTC month: an account last reset before it is due. */
export function startOfUtcMonth(now: Date): Date {
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
}
