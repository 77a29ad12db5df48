// Spending credits: one conditional UPDATE, so concurrent spends serialize on the
// account row and the balance never goes below zero; the events commit or roll back
// with the spend. Work that is slow and may fail (a provider call) reserves the credits
// first, outside any transaction, then settles or releases the reservation, so the
// account row is never locked while waiting on someone else.
import type { EntityManager } from '@mikro-orm/postgresql';
import { PaymentRequiredError } from '../errors.ts';
import { emit } from '../events/emit.ts';

/** A balance below this many credits is low; `Low Credit Balance` is emitted when a spend crosses it. */
export const LOW_CREDIT_THRESHOLD = 50;

/** Why credits were spent, as carried in the `Credits Spent` payload. */
export type SpendReason = 'tag_assignment' | (string & {});

/** Credits taken from an account whose use is not yet announced. */
export type CreditReservation = { accountId: string; amount: number; balance: number };

async function takeCredits(em: EntityManager, accountId: string, amount: number): Promise<number> {
  if (!Number.isInteger(amount) || amount <= 0) throw new Error(`credits: amount must be a positive integer, got ${amount}`);
  // A concurrent spend waits for the row lock, then re-checks `credits >= amount`
  // against the committed balance (READ COMMITTED re-evaluates the WHERE clause).
  const rows = await em.execute<{ credits: number }[]>(
    `update accounts
        set credits = credits - ?, monthly_credits_used = monthly_credits_used + ?, updated_at = now()
      where id = ? and credits >= ?
      returning credits`,
    [amount, amount, accountId, amount],
  );
  const row = rows[0];
  if (!row) throw new PaymentRequiredError();
  return Number(row.credits);
}

async function announceSpend(em: EntityManager, accountId: string, amount: number, balance: number, reason: SpendReason): Promise<void> {
  await emit(em, accountId, 'Credits Spent', { amount, reason, balance });
  const previous = balance + amount;
  if (previous >= LOW_CREDIT_THRESHOLD && balance < LOW_CREDIT_THRESHOLD) {
    await emit(em, accountId, 'Low Credit Balance', { balance, threshold: LOW_CREDIT_THRESHOLD });
  }
}

/**
 * Takes `amount` credits from the account inside `em`'s transaction (call it
 * from `em.transactional`). Throws PaymentRequiredError, changing nothing,
 * when the balance is too small. Returns the new balance.
 */
export async function spendCredits(em: EntityManager, accountId: string, amount: number, reason: SpendReason): Promise<number> {
  const balance = await takeCredits(em, accountId, amount);
  await announceSpend(em, accountId, amount, balance, reason);
  return balance;
}

/**
 * Takes `amount` credits now, in its own statement (call it outside a transaction), and
 * announces nothing yet. Throws PaymentRequiredError when the balance is too small.
 * A process that dies before settling or releasing loses the reserved credits.
 */
export async function reserveCredits(em: EntityManager, accountId: string, amount: number): Promise<CreditReservation> {
  return { accountId, amount, balance: await takeCredits(em, accountId, amount) };
}

/** The reserved credits were spent: announces it (Credits Spent, Low Credit Balance) on `em`'s transaction. */
export async function settleCreditReservation(em: EntityManager, reservation: CreditReservation, reason: SpendReason): Promise<void> {
  await announceSpend(em, reservation.accountId, reservation.amount, reservation.balance, reason);
}

/** Nothing was done with the reserved credits: gives them back, announcing nothing. */
export async function releaseCreditReservation(em: EntityManager, reservation: CreditReservation): Promise<void> {
  await em.execute(
    `update accounts
        set credits = credits + ?, monthly_credits_used = greatest(monthly_credits_used - ?, 0), updated_at = now()
      where id = ?`,
    [reservation.amount, reservation.amount, reservation.accountId],
  );
}
