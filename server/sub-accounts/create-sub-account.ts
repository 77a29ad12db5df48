// POST /sub-accounts: a client account of the agency. It has no API key of its
// own (the agency acts on it with `?userId=`).
import { UniqueConstraintViolationException, type EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { Account } from '../db/entities/index.ts';
import { newId } from '../db/ids.ts';
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
import { profileEntries, SUB_ACCOUNT_ROLE, toSubAccountRecord, type SubAccountRecord } from './sub-account-record.ts';

const DEFAULT_PLAN = 'pro';

export const SubAccountCreateInput = z.object({
  email: SubAccountEmail,
  first_name: SubAccountName,
  last_name: SubAccountName,
  role: SubAccountRole.optional(),
  is_agency_sub_account: z.boolean().optional(),
  ...profileFields,
  usage_limits: z.object({
    monthly_credits: MonthlyCredits,
    monthly_credits_used: WholeCount.optional(),
    // The balance starts at the monthly allocation unless given.
    credits: WholeCount.optional(),
    roll_over_to_next_month: z.boolean().optional(),
  }),
});
export type SubAccountCreateInput = z.infer<typeof SubAccountCreateInput>;

export async function createSubAccount(em: EntityManager, agencyId: string, input: SubAccountCreateInput): Promise<SubAccountRecord> {
  await requireAgency(em, agencyId);
  const limits = input.usage_limits;
  const account = em.create(Account, {
    id: newId('usr'),
    // Stored lower-cased like every account e-mail, so uniqueness ignores case.
    email: input.email.toLowerCase(),
    name: displayName(input.first_name, input.last_name),
    plan: DEFAULT_PLAN,
    agency: agencyId,
    firstName: input.first_name,
    lastName: input.last_name,
    role: SUB_ACCOUNT_ROLE,
    isAgencySubAccount: input.is_agency_sub_account ?? true,
    monthlyCredits: limits.monthly_credits,
    monthlyCreditsUsed: limits.monthly_credits_used ?? 0,
    credits: limits.credits ?? limits.monthly_credits,
    rollOverToNextMonth: limits.roll_over_to_next_month ?? false,
  });
  for (const [field, property] of profileEntries) account[property] = input[field] ?? null;
  try {
    await em.persist(account).flush();
  } catch (error) {
    if (error instanceof UniqueConstraintViolationException) throw duplicateEmail();
    throw error;
  }
  return toSubAccountRecord(account);
}
