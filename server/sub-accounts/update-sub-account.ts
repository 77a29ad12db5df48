// PUT /sub-accounts/{id}: change a client's profile and usage limits.
import { LockMode, UniqueConstraintViolationException, type EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { updateSubAccountUsageLimits } from '../credits/usage-limits.ts';
import { Account } from '../db/entities/index.ts';
import { InvalidInputError, NotFoundError } from '../errors.ts';
import { requireAgency } from './find-sub-account.ts';
import {
  displayName,
  duplicateEmail,
  MonthlyCredits,
  profileFields,
  SubAccountEmail,
  SubAccountName,
  SubAccountRole,
  WholeCount,
} from './sub-account-fields.ts';
import { profileEntries, toSubAccountRecord, type SubAccountRecord } from './sub-account-record.ts';

export const SubAccountUpdateInput = z.object({
  email: SubAccountEmail.optional(),
  first_name: SubAccountName.optional(),
  last_name: SubAccountName.optional(),
  role: SubAccountRole.optional(),
  is_agency_sub_account: z.boolean().optional(),
  ...profileFields,
  // Members sent replace those values; members left out keep theirs.
  usage_limits: z
    .object({
      monthly_credits: MonthlyCredits.optional(),
      monthly_credits_used: WholeCount.optional(),
      credits: WholeCount.optional(),
      roll_over_to_next_month: z.boolean().optional(),
    })
    .optional(),
});
export type SubAccountUpdateInput = z.infer<typeof SubAccountUpdateInput>;

export async function updateSubAccount(
  em: EntityManager,
  agencyId: string,
  subAccountId: string,
  input: SubAccountUpdateInput,
): Promise<SubAccountRecord> {
  const { usage_limits: limits = {}, ...fields } = input;
  const changesSomething =
    Object.values(fields).some((value) => value !== undefined) || Object.values(limits).some((value) => value !== undefined);
  if (!changesSomething) throw new InvalidInputError('No fields to update', { reason: 'no_fields' });
  await requireAgency(em, agencyId);
  try {
    return await em.transactional(async (tx) => {
      const account = await tx.findOne(Account, { id: subAccountId, agency: agencyId }, { lockMode: LockMode.PESSIMISTIC_WRITE });
      if (!account) throw new NotFoundError('Sub-account not found');
      if (fields.email !== undefined) account.email = fields.email.toLowerCase();
      if (fields.first_name !== undefined) account.firstName = fields.first_name;
      if (fields.last_name !== undefined) account.lastName = fields.last_name;
      if (fields.first_name !== undefined || fields.last_name !== undefined) {
        account.name = displayName(account.firstName ?? '', account.lastName ?? '');
      }
      if (fields.is_agency_sub_account !== undefined) account.isAgencySubAccount = fields.is_agency_sub_account;
      for (const [field, property] of profileEntries) {
        if (fields[field] !== undefined) account[property] = fields[field];
      }
      if (limits.monthly_credits_used !== undefined) account.monthlyCreditsUsed = limits.monthly_credits_used;
      await tx.flush();
      const { monthly_credits, credits, roll_over_to_next_month } = limits;
      if (monthly_credits !== undefined || credits !== undefined || roll_over_to_next_month !== undefined) {
        // The allowance changes through the one place that announces a raised balance (Credits Recharged).
        await updateSubAccountUsageLimits(tx, agencyId, subAccountId, { monthly_credits, credits, roll_over_to_next_month });
      }
      return toSubAccountRecord(await tx.findOneOrFail(Account, subAccountId, { refresh: true }));
    });
  } catch (error) {
    if (error instanceof UniqueConstraintViolationException) throw duplicateEmail();
    throw error;
  }
}
