// Spending credits: one conditional UPDATE, so concurrent spends serialize on the
// account row and the balance never goes below zero; the events commit or roll back
// with the spend. Work that is slow and may fail (a provider call) reserves the credits
// first, outside any transaction, then settles or releases the reservation, so the
// account row is never locked while waiting on someone else. A reservation is a row of
// `credit_reservations` written with the debit, so one left behind by a process that
// died mid-call is given back by the sweep (releaseStaleReservations), not lost.
import type { EntityManager } from '@mikro-orm/postgresql';
import type pg from 'pg';
import { newId } from '../db/ids.ts';
import { queryRows, rawSql, runSql, sql } from '../db/sql.ts';
import { PaymentRequiredError } from '../errors.ts';
import { emit } from '../events/emit.ts';
import { assertCreditAmount, spendEvents, type SpendReason } from './credit-arithmetic.ts';

export { LOW_CREDIT_THRESHOLD, type SpendReason } from './credit-arithmetic.ts';

/** Credits taken from an account whose use is not yet announced. */
export type CreditReservation = { id: string; accountId: string; amount: number; balance: number };

/** How long a reservation may wait for its outcome before the sweep gives its credits back (far above any provider call's time-out). */
export const STALE_RESERVATION_MINUTES = 15;

// The debit. A concurrent spend waits for the row lock, then re-checks `credits >= amount`
// against the committed balance (READ COMMITTED re-evaluates the WHERE clause).
const debit = (accountId: string, amount: number) => sql`update accounts
        set credits = credits - ${amount}::int, monthly_credits_used = monthly_credits_used + ${amount}::int, updated_at = now()
      where id = ${accountId} and credits >= ${amount}::int
      returning id, credits`;

// Giving credits back to account `a` from rows `r` (account_id, amount) of released reservations.
const GIVE_BACK = rawSql(`update accounts a
        set credits = a.credits + r.amount, monthly_credits_used = greatest(a.monthly_credits_used - r.amount, 0), updated_at = now()`);

async function takeCredits(em: EntityManager, accountId: string, amount: number): Promise<number> {
  assertCreditAmount(amount);
  const rows = await queryRows<{ credits: number }>(em, debit(accountId, amount));
  const row = rows[0];
  if (!row) throw new PaymentRequiredError();
  return Number(row.credits);
}

async function announceSpend(em: EntityManager, accountId: string, amount: number, balance: number, reason: SpendReason): Promise<void> {
  for (const event of spendEvents(amount, balance, reason)) await emit(em, accountId, event.name, event.data);
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
 * Takes `amount` credits now and records the reservation, in one statement (call it
 * outside a transaction); announces nothing yet. Throws PaymentRequiredError when the
 * balance is too small. Settle or release it; one left for STALE_RESERVATION_MINUTES
 * (its process died) is released by the sweep.
 */
export async function reserveCredits(em: EntityManager, accountId: string, amount: number): Promise<CreditReservation> {
  assertCreditAmount(amount);
  const id = newId('crr');
  const rows = await queryRows<{ credits: number }>(
    em,
    sql`with taken as (${debit(accountId, amount)}), reserved as (
       insert into credit_reservations (id, account_id, amount) select ${id}::text, id, ${amount}::int from taken
     )
     select credits from taken`,
  );
  const row = rows[0];
  if (!row) throw new PaymentRequiredError();
  return { id, accountId, amount, balance: Number(row.credits) };
}

/**
 * The reserved credits were spent: ends the reservation and announces the spend (Credits
 * Spent, Low Credit Balance), on `em`'s transaction. Should the sweep already have given
 * the credits back (the work outlived STALE_RESERVATION_MINUTES), they are taken again,
 * down to zero at most: the work was done.
 */
export async function settleCreditReservation(em: EntityManager, reservation: CreditReservation, reason: SpendReason): Promise<void> {
  const ended = await queryRows<{ id: string }>(em, sql`delete from credit_reservations where account_id = ${reservation.accountId} and id = ${reservation.id} returning id`);
  let balance = reservation.balance;
  if (ended.length === 0) {
    const [row] = await queryRows<{ credits: number }>(
      em,
      sql`update accounts
          set credits = greatest(credits - ${reservation.amount}::int, 0), monthly_credits_used = monthly_credits_used + ${reservation.amount}::int, updated_at = now()
        where id = ${reservation.accountId}
       returning credits`,
    );
    balance = Number(row?.credits ?? 0);
  }
  await announceSpend(em, reservation.accountId, reservation.amount, balance, reason);
}

/** Nothing was done with the reserved credits: gives them back, announcing nothing (once, whoever releases first). */
export async function releaseCreditReservation(em: EntityManager, reservation: CreditReservation): Promise<void> {
  await runSql(
    em,
    sql`with released as (delete from credit_reservations where account_id = ${reservation.accountId} and id = ${reservation.id} returning account_id, amount)
     ${GIVE_BACK} from released r where a.id = r.account_id`,
  );
}

/**
 * The sweep: gives back the credits of every reservation older than
 * STALE_RESERVATION_MINUTES (its process died between reserving and settling), one
 * statement for all. Returns how many reservations it released.
 */
export async function releaseStaleReservations(pool: pg.Pool): Promise<number> {
  const rows = await queryRows<{ released: number }>(
    pool,
    sql`with released as (
       delete from credit_reservations where created_at < now() - make_interval(mins => ${STALE_RESERVATION_MINUTES}::int) returning account_id, amount
     ), per_account as (
       select account_id, sum(amount)::int as amount, count(*)::int as reservations from released group by account_id
     ), given_back as (
       ${GIVE_BACK} from per_account r where a.id = r.account_id
     )
     select coalesce(sum(reservations), 0)::int as released from per_account`,
  );
  return rows[0]?.released ?? 0;
}
