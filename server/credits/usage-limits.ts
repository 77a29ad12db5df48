// An account's credit allowance as the specification's UsageLimits record,
// and the agency's changes to a client account's allowance.
import { LockMode, type EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { Account } from '../db/entities/index.ts';
import { ForbiddenError, InvalidInputError, NotFoundError } from '../errors.ts';
import { emit } from '../events/emit.ts';
import { columnInteger } from '../input-rules.ts';
import { agencyRecharge } from './credit-arithmetic.ts';

export const UsageLimits = z.object({
  monthly_credits: z.number().int(),
  monthly_credits_used: z.number().int(),
  last_reset_date: z.string(),
  notifications: z.record(z.string(), z.unknown()).nullable(),
  credits: z.number().int(),
  roll_over_to_next_month: z.boolean(),
});
export type UsageLimits = z.infer<typeof UsageLimits>;

export function toUsageLimits(account: Account): UsageLimits {
  return {
    monthly_credits: account.monthlyCredits,
    monthly_credits_used: account.monthlyCreditsUsed,
    last_reset_date: account.lastResetDate.toISOString(),
    notifications: account.notifications ?? null,
    credits: account.credits,
    roll_over_to_next_month: account.rollOverToNextMonth,
  };
}

export async function getUsageLimits(em: EntityManager, accountId: string): Promise<UsageLimits> {
  const account = await em.findOneOrFail(Account, accountId);
  return toUsageLimits(account);
}

export const UsageLimitsUpdateInput = z.object({
  monthly_credits: columnInteger('monthly_credits').min(1, 'monthly_credits must be at least 1').optional(),
  credits: columnInteger('credits').min(0, 'credits must not be negative').optional(),
  roll_over_to_next_month: z.boolean().optional(),
});
export type UsageLimitsUpdateInput = z.infer<typeof UsageLimitsUpdateInput>;

/**
 * PUT /sub-accounts/{id}/usage-limits: an agency changes one of its client
 * accounts. Raising the balance emits `Credits Recharged` on the client account.
 */
export async function updateSubAccountUsageLimits(
  em: EntityManager,
  agencyId: string,
  subAccountId: string,
  input: UsageLimitsUpdateInput,
): Promise<UsageLimits> {
  // Same order of checks as PUT /sub-accounts/{id}: fields, then agency, then the client.
  if (input.monthly_credits === undefined && input.credits === undefined && input.roll_over_to_next_month === undefined) {
    throw new InvalidInputError('No fields to update: send monthly_credits, credits or roll_over_to_next_month', { reason: 'no_fields' });
  }
  const agency = await em.findOneOrFail(Account, agencyId);
  if (!agency.isAgency) throw new ForbiddenError('Only agency accounts can manage sub-accounts');
  return em.transactional(async (tx) => {
    // Locked so a concurrent spend cannot slip between reading and writing the balance.
    const client = await tx.findOne(
      Account,
      { id: subAccountId, agency: agencyId },
      { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true },
    );
    if (!client) throw new NotFoundError('Sub-account not found');
    const previous = client.credits;
    if (input.monthly_credits !== undefined) client.monthlyCredits = input.monthly_credits;
    if (input.roll_over_to_next_month !== undefined) client.rollOverToNextMonth = input.roll_over_to_next_month;
    if (input.credits !== undefined) client.credits = input.credits;
    const recharge = agencyRecharge(previous, client.credits);
    if (recharge) await emit(tx, client.id, recharge.name, recharge.data);
    await tx.flush();
    return toUsageLimits(client);
  });
}
