// An agency's client sub-accounts: create, read, change, delete, page through.
// A client is an account row whose agency_id is the agency; it has no API key
// of its own (the agency acts on it with `?userId=`), and its usage limits are
// the account's credit columns. Another agency's client is not found here.
import { LockMode, UniqueConstraintViolationException, type EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { announceCredentialChange } from '../auth/credential-changes.ts';
import { updateSubAccountUsageLimits } from '../credits/usage-limits.ts';
import { Account } from '../db/entities/index.ts';
import { newId } from '../db/ids.ts';
import { ConflictError, ForbiddenError, InvalidInputError, NotFoundError } from '../errors.ts';
import { columnInteger } from '../input-rules.ts';
import { readPage, writePage, type PageInput } from '../pagination.ts';
import type { Secrets } from '../secrets.ts';

export const SUB_ACCOUNT_ROLE = 'Sub Account';
const DEFAULT_PLAN = 'pro';

const Email = z.email('must be a valid e-mail address');
const Name = z.string().trim().min(1, 'must not be empty').max(200, 'must be at most 200 characters');
const Role = z.literal(SUB_ACCOUNT_ROLE, { error: `must be ${SUB_ACCOUNT_ROLE}` });
const OptionalText = z.string().max(2000, 'must be at most 2000 characters').nullable().optional();
const WholeCount = columnInteger().min(0, 'must not be negative');

const profileFields = {
  business_name: OptionalText,
  description: OptionalText,
  address_line: OptionalText,
  city: OptionalText,
  country: OptionalText,
  postal_code: OptionalText,
  state: OptionalText,
  time_zone_id: OptionalText,
  language: OptionalText,
};
type ProfileField = keyof typeof profileFields;

/** Spec column → entity property for the optional profile strings. */
const PROFILE_PROPERTIES = {
  business_name: 'businessName',
  description: 'description',
  address_line: 'addressLine',
  city: 'city',
  country: 'country',
  postal_code: 'postalCode',
  state: 'state',
  time_zone_id: 'timeZoneId',
  language: 'language',
} as const satisfies Record<ProfileField, keyof Account>;

const MonthlyCredits = columnInteger().min(1, 'must be at least 1');

export const SubAccountCreateInput = z.object({
  email: Email,
  first_name: Name,
  last_name: Name,
  role: Role.optional(),
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

export const SubAccountUpdateInput = z.object({
  email: Email.optional(),
  first_name: Name.optional(),
  last_name: Name.optional(),
  role: Role.optional(),
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

export type SubAccountUsageLimits = {
  monthly_credits: number;
  monthly_credits_used: number;
  credits: number;
  roll_over_to_next_month: boolean;
};

export type SubAccountRecord = {
  id: string;
  email: string;
  first_name: string;
  last_name: string;
  role: typeof SUB_ACCOUNT_ROLE;
  is_agency_sub_account: boolean;
} & Record<ProfileField, string | null> & { usage_limits: SubAccountUsageLimits };

function toSubAccountRecord(account: Account): SubAccountRecord {
  const profile = {} as Record<ProfileField, string | null>;
  for (const [field, property] of Object.entries(PROFILE_PROPERTIES) as [ProfileField, (typeof PROFILE_PROPERTIES)[ProfileField]][]) {
    profile[field] = account[property] ?? null;
  }
  return {
    id: account.id,
    email: account.email,
    first_name: account.firstName ?? '',
    last_name: account.lastName ?? '',
    role: SUB_ACCOUNT_ROLE,
    is_agency_sub_account: account.isAgencySubAccount,
    ...profile,
    usage_limits: {
      monthly_credits: account.monthlyCredits,
      monthly_credits_used: account.monthlyCreditsUsed,
      credits: account.credits,
      roll_over_to_next_month: account.rollOverToNextMonth,
    },
  };
}

function displayName(firstName: string, lastName: string): string {
  return `${firstName} ${lastName}`.trim();
}

/** Only an agency account manages client sub-accounts. */
async function requireAgency(em: EntityManager, accountId: string): Promise<void> {
  const account = await em.findOne(Account, accountId, { fields: ['id', 'isAgency'] });
  if (!account?.isAgency) throw new ForbiddenError('Only agency accounts can manage sub-accounts');
}

/** A client of the agency, or 404 (unknown ids and other agencies' clients alike). */
async function requireOwnSubAccount(em: EntityManager, agencyId: string, subAccountId: string): Promise<Account> {
  const account = await em.findOne(Account, { id: subAccountId, agency: agencyId });
  if (!account) throw new NotFoundError('Sub-account not found');
  return account;
}

function duplicateEmail(): ConflictError {
  return new ConflictError('An account with that e-mail already exists');
}

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
  for (const [field, property] of Object.entries(PROFILE_PROPERTIES) as [ProfileField, (typeof PROFILE_PROPERTIES)[ProfileField]][]) {
    account[property] = input[field] ?? null;
  }
  try {
    await em.persist(account).flush();
  } catch (error) {
    if (error instanceof UniqueConstraintViolationException) throw duplicateEmail();
    throw error;
  }
  return toSubAccountRecord(account);
}

export async function getSubAccount(em: EntityManager, agencyId: string, subAccountId: string): Promise<SubAccountRecord> {
  await requireAgency(em, agencyId);
  return toSubAccountRecord(await requireOwnSubAccount(em, agencyId, subAccountId));
}

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
      for (const [field, property] of Object.entries(PROFILE_PROPERTIES) as [ProfileField, (typeof PROFILE_PROPERTIES)[ProfileField]][]) {
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

/** Removes the client account; the database cascades to everything it owns. */
export async function deleteSubAccount(em: EntityManager, agencyId: string, subAccountId: string): Promise<void> {
  await requireAgency(em, agencyId);
  await em.transactional(async (tx) => {
    const deleted = await tx.nativeDelete(Account, { id: subAccountId, agency: agencyId });
    if (deleted === 0) throw new NotFoundError('Sub-account not found');
    // Its keys, and the agency's subscriptions on it, end now rather than at the next periodic check.
    await announceCredentialChange(tx, subAccountId);
  });
}

export async function listSubAccounts(
  em: EntityManager,
  secrets: Secrets,
  agencyId: string,
  input: PageInput,
): Promise<{ sub_accounts: SubAccountRecord[]; next_cursor: string | null }> {
  await requireAgency(em, agencyId);
  const scope = `sub-accounts:${agencyId}`;
  const page = readPage(secrets, scope, input);
  const rows = await em.find(
    Account,
    { agency: agencyId, ...(page.after ? { id: { $gt: page.after } } : {}) },
    { orderBy: { id: 'asc' }, limit: page.limit + 1 },
  );
  const { items, next_cursor } = writePage(secrets, scope, rows, page.limit, (row) => row.id);
  return { sub_accounts: items.map(toSubAccountRecord), next_cursor };
}
