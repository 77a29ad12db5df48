// The rules for a sub-account's fields, shared by creating and changing one.
import { z } from 'zod';
import { ConflictError } from '../errors.ts';
import { columnInteger, NON_BLANK_TEXT_PATTERN } from '../input-rules.ts';
import { SUB_ACCOUNT_ROLE, type ProfileField } from './sub-account-record.ts';

export const SubAccountEmail = z.email('must be a valid e-mail address');
export const SubAccountName = z.string().trim().min(1, 'must not be empty').max(200, 'must be at most 200 characters').meta({ pattern: NON_BLANK_TEXT_PATTERN });
export const SubAccountRole = z.literal(SUB_ACCOUNT_ROLE, { error: `must be ${SUB_ACCOUNT_ROLE}` });
export const WholeCount = columnInteger().min(0, 'must not be negative');
export const MonthlyCredits = columnInteger().min(1, 'must be at least 1');

const OptionalText = z.string().max(2000, 'must be at most 2000 characters').nullable().optional();
export const profileFields = {
  business_name: OptionalText,
  description: OptionalText,
  address_line: OptionalText,
  city: OptionalText,
  country: OptionalText,
  postal_code: OptionalText,
  state: OptionalText,
  time_zone_id: OptionalText,
  language: OptionalText,
} satisfies Record<ProfileField, typeof OptionalText>;

export function displayName(firstName: string, lastName: string): string {
  return `${firstName} ${lastName}`.trim();
}

export function duplicateEmail(): ConflictError {
  return new ConflictError('An account with that e-mail already exists');
}
