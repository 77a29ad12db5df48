// Spending credits: one conditional UPDATE on the caller's transaction, so
// concurrent spends serialize on the account row and the balance never goes
// below zero; the events commit or roll back with the spend.
import type { EntityManager } from '@mikro-orm/postgresql';
import { PaymentRequiredError } from '../errors.ts';
import { emit } from '../events/emit.ts';

/** A balance below this many credits is low; `Low Credit Balance` is emitted when a spend crosses it. */
export const LOW_CREDIT_THRESHOLD = 50;

/** Why credits were spent, as carried in the `Credits Spent` payload. */
export type SpendReason = 'tag_assignment' | (string & {});

/**
 * Takes `amount` credits from the account inside `em`'s transaction (call it
 * from `em.transactional`). Throws PaymentRequiredError, changing nothing,
 * when the balance is too small. Returns the new balance.
 */
export async function spendCredits(em: EntityManager, accountId: string, amount: number, reason: SpendReason): Promise<number> {
  if (!Number.isInteger(amount) || amount <= 0) throw new Error(`spendCredits: amount must be a positive integer, got ${amount}`);
  // The row lock makes a concurrent spend wait, then re-check `credits >= amount`
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
  const balance = Number(row.credits);
  await emit(em, accountId, 'Credits Spent', { amount, reason, balance });
  const previous = balance + amount;
  if (previous >= LOW_CREDIT_THRESHOLD && balance < LOW_CREDIT_THRESHOLD) {
    await emit(em, accountId, 'Low Credit Balance', { balance, threshold: LOW_CREDIT_THRESHOLD });
  }
  return balance;
}
