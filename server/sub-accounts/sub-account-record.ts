// How a client sub-account is shown. A client is an account row whose agency_id
// is the agency; its usage limits are the account's credit columns.
import { z } from 'zod';
import type { Account } from '../db/entities/index.ts';

export const SUB_ACCOUNT_ROLE = 'Sub Account';

/** Spec column → entity property for the optional profile strings. */
export const PROFILE_PROPERTIES = {
  business_name: 'businessName',
  description: 'description',
  address_line: 'addressLine',
  city: 'city',
  country: 'country',
  postal_code: 'postalCode',
  state: 'state',
  time_zone_id: 'timeZoneId',
  language: 'language',
} as const satisfies Record<string, keyof Account>;
export type ProfileField = keyof typeof PROFILE_PROPERTIES;

export const profileEntries = Object.entries(PROFILE_PROPERTIES) as [ProfileField, (typeof PROFILE_PROPERTIES)[ProfileField]][];

export const SubAccountRecord = z.object({
  id: z.string(),
  email: z.string(),
  first_name: z.string(),
  last_name: z.string(),
  role: z.literal(SUB_ACCOUNT_ROLE),
  is_agency_sub_account: z.boolean(),
  business_name: z.string().nullable(),
  description: z.string().nullable(),
  address_line: z.string().nullable(),
  city: z.string().nullable(),
  country: z.string().nullable(),
  postal_code: z.string().nullable(),
  state: z.string().nullable(),
  time_zone_id: z.string().nullable(),
  language: z.string().nullable(),
  usage_limits: z.object({
    monthly_credits: z.number().int(),
    monthly_credits_used: z.number().int(),
    credits: z.number().int(),
    roll_over_to_next_month: z.boolean(),
  }),
});
export type SubAccountRecord = z.infer<typeof SubAccountRecord>;

export function toSubAccountRecord(account: Account): SubAccountRecord {
  const profile = {} as Record<ProfileField, string | null>;
  for (const [field, property] of profileEntries) profile[field] = account[property] ?? null;
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
