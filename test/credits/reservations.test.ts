// Credit reservations (work that calls someone else, such as a template send, reserves its
// credits first): settled or released exactly once, and given back by the sweep when the
// process that reserved them died before either.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import {
  releaseCreditReservation,
  releaseStaleReservations,
  reserveCredits,
  settleCreditReservation,
  STALE_RESERVATION_MINUTES,
} from '../../server/credits/spend-credits.ts';
import { PaymentRequiredError } from '../../server/errors.ts';
import { startTestService, type TestService } from '../helpers/service.ts';

let service: TestService;
beforeAll(async () => {
  service = await startTestService();
});
afterAll(async () => {
  await service?.stop();
});

async function accountRow(accountId: string): Promise<{ credits: number; monthly_credits_used: number }> {
  const { rows } = await service.services.pool.query('select credits, monthly_credits_used from accounts where id = $1', [accountId]);
  return rows[0];
}

async function reservationsOf(accountId: string): Promise<string[]> {
  const { rows } = await service.services.pool.query('select id from credit_reservations where account_id = $1 order by id', [accountId]);
  return rows.map((row: { id: string }) => row.id);
}

async function spentEvents(accountId: string): Promise<unknown[]> {
  const { rows } = await service.services.pool.query(`select payload from events where account_id = $1 and name = 'Credits Spent'`, [accountId]);
  return rows.map((row: { payload: { data: unknown } }) => row.payload.data);
}

/** Ages a reservation past the sweep's limit, as if its process had died that long ago. */
async function age(reservationId: string): Promise<void> {
  await service.services.pool.query(`update credit_reservations set created_at = now() - make_interval(mins => $2) where id = $1`, [reservationId, STALE_RESERVATION_MINUTES + 1]);
}

describe('credit reservations', () => {
  test('a reservation takes the credits and is recorded; released, they come back once, however many times it is released', async () => {
    const { userId } = await service.createAccount({ credits: 10 });
    const em = service.services.orm.em.fork();
    const reservation = await reserveCredits(em, userId, 3);
    expect(reservation).toMatchObject({ accountId: userId, amount: 3, balance: 7 });
    expect(await accountRow(userId)).toEqual({ credits: 7, monthly_credits_used: 3 });
    expect(await reservationsOf(userId)).toEqual([reservation.id]);

    await releaseCreditReservation(em, reservation);
    await releaseCreditReservation(em, reservation);
    expect(await accountRow(userId)).toEqual({ credits: 10, monthly_credits_used: 0 });
    expect(await reservationsOf(userId)).toEqual([]);
    expect(await spentEvents(userId)).toEqual([]);
  });

  test('settled: the reservation ends and the spend is announced with the transaction; nothing is given back later', async () => {
    const { userId } = await service.createAccount({ credits: 10 });
    const reservation = await reserveCredits(service.services.orm.em.fork(), userId, 4);
    await service.services.orm.em.fork().transactional((tx) => settleCreditReservation(tx, reservation, 'test'));
    expect(await reservationsOf(userId)).toEqual([]);
    expect(await spentEvents(userId)).toEqual([{ amount: 4, reason: 'test', balance: 6 }]);
    await releaseCreditReservation(service.services.orm.em.fork(), reservation);
    expect(await accountRow(userId)).toEqual({ credits: 6, monthly_credits_used: 4 });
  });

  test('a settlement that rolls back leaves the reservation for its release', async () => {
    const { userId } = await service.createAccount({ credits: 10 });
    const reservation = await reserveCredits(service.services.orm.em.fork(), userId, 2);
    await expect(
      service.services.orm.em.fork().transactional(async (tx) => {
        await settleCreditReservation(tx, reservation, 'test');
        throw new Error('the message could not be recorded');
      }),
    ).rejects.toThrow('the message could not be recorded');
    expect(await reservationsOf(userId)).toEqual([reservation.id]);
    expect(await spentEvents(userId)).toEqual([]);
  });

  test('too few credits: 402 and no reservation', async () => {
    const { userId } = await service.createAccount({ credits: 1 });
    await expect(reserveCredits(service.services.orm.em.fork(), userId, 2)).rejects.toBeInstanceOf(PaymentRequiredError);
    expect(await reservationsOf(userId)).toEqual([]);
    expect(await accountRow(userId)).toEqual({ credits: 1, monthly_credits_used: 0 });
  });

  test(`the sweep gives back reservations left unsettled for ${STALE_RESERVATION_MINUTES} minutes, and only those`, async () => {
    const { userId } = await service.createAccount({ credits: 20 });
    const em = service.services.orm.em.fork();
    // Two reservations whose process died, and one whose provider call is still under way.
    const [dead1, dead2, live] = [await reserveCredits(em, userId, 3), await reserveCredits(em, userId, 5), await reserveCredits(em, userId, 1)];
    await age(dead1.id);
    await age(dead2.id);
    expect(await accountRow(userId)).toEqual({ credits: 11, monthly_credits_used: 9 });

    expect(await releaseStaleReservations(service.services.pool)).toBeGreaterThanOrEqual(2);
    expect(await accountRow(userId)).toEqual({ credits: 19, monthly_credits_used: 1 });
    expect(await reservationsOf(userId)).toEqual([live.id]);
    // A second sweep finds nothing more of this account's.
    await releaseStaleReservations(service.services.pool);
    expect(await accountRow(userId)).toEqual({ credits: 19, monthly_credits_used: 1 });
  });

  test('work that outlived the sweep and then succeeded is charged again when it settles', async () => {
    const { userId } = await service.createAccount({ credits: 10 });
    const reservation = await reserveCredits(service.services.orm.em.fork(), userId, 3);
    await age(reservation.id);
    await releaseStaleReservations(service.services.pool);
    expect((await accountRow(userId)).credits).toBe(10);
    await service.services.orm.em.fork().transactional((tx) => settleCreditReservation(tx, reservation, 'test'));
    expect(await accountRow(userId)).toEqual({ credits: 7, monthly_credits_used: 3 });
    expect(await spentEvents(userId)).toEqual([{ amount: 3, reason: 'test', balance: 7 }]);
  });
});
