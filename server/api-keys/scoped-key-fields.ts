// A scoped key's permission set and expiry as sent, checked and completed with
// their defaults; shared by creating and changing a key.
import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { API_SECTIONS, type ApiSection, type Scopes } from '../auth/scopes.ts';
import { Account } from '../db/entities/index.ts';
import { InvalidInputError } from '../errors.ts';
import { BLANK_CHARACTERS, columnDateTime } from '../input-rules.ts';
import { SCOPED_KEY_DEFAULT_RATE_LIMIT, SCOPED_KEY_MAX_RATE_LIMIT } from '../rate-limit/limits.ts';

/** A section a scoped key may be granted, as canonicalTags reads it: any letter case, white space around it. */
const GRANTABLE_SECTION_PATTERN = `^[${BLANK_CHARACTERS}]*(?:${API_SECTIONS.filter((section) => section !== 'API Keys')
  .map((section) => section.replace(/[A-Za-z]/g, (letter) => `[${letter.toUpperCase()}${letter.toLowerCase()}]`))
  .join('|')})[${BLANK_CHARACTERS}]*$`;

export const ScopesInput = z
  .object({
    // A literal, not z.boolean(): trpc-to-openapi switches coercion on for booleans in
    // inputs, and Boolean('false') or Boolean(0) must never make a key writable (rule 3).
    read_only: z.literal([true, false], { error: 'scopes.read_only must be true or false' }).optional(),
    tags: z
      .array(z.string({ error: 'scopes.tags must be section names' }).meta({ pattern: GRANTABLE_SECTION_PATTERN }))
      .max(API_SECTIONS.length * 2)
      .optional(),
    sub_account_ids: z
      .array(z.string({ error: 'scopes.sub_account_ids must be account ids' }).min(1))
      .max(1000)
      .optional()
      .describe('Client accounts the caller manages (400 naming any other), or ["*"] for all of them.'),
    rate_limit_per_min: z
      .number({ error: 'scopes.rate_limit_per_min must be a number' })
      .int('scopes.rate_limit_per_min must be a whole number')
      .min(1, 'scopes.rate_limit_per_min must be at least 1')
      .max(SCOPED_KEY_MAX_RATE_LIMIT, `scopes.rate_limit_per_min must be at most ${SCOPED_KEY_MAX_RATE_LIMIT}`)
      .optional(),
  })
  // A misspelt member would silently fall back to a default; say so instead.
  .strict();

export const ExpiresAt = columnDateTime('expires_at must be an ISO 8601 date-time before the year 10000, for example 2030-01-31T00:00:00Z')
  .nullable()
  .describe('In the future (400 otherwise); null: the key never expires.');

const SECTION_BY_NAME = new Map<string, ApiSection>(API_SECTIONS.map((section) => [section.toLowerCase(), section]));

function canonicalTags(tags: string[]): ApiSection[] {
  const sections = tags.map((tag) => SECTION_BY_NAME.get(tag.trim().toLowerCase()));
  if (sections.includes('API Keys')) {
    throw new InvalidInputError('The API Keys section cannot be granted to a scoped key', { code: 'invalid_scopes' });
  }
  const unknown = tags.find((_, index) => sections[index] === undefined);
  if (unknown !== undefined) {
    const grantable = API_SECTIONS.filter((section) => section !== 'API Keys').join(', ');
    throw new InvalidInputError(`scopes.tags: "${unknown}" is not an API section; sections are ${grantable}`);
  }
  return [...new Set(sections as ApiSection[])];
}

/**
 * The whole permission set from what was sent; every missing member takes its
 * default (rules 1-4: read-only unless `false` is sent, Analytics only unless
 * `tags` is sent (`[]` = every section), own account only, 60 per minute).
 */
export function scopesFrom(input: z.infer<typeof ScopesInput> | undefined): Scopes {
  const subAccounts = [...new Set(input?.sub_account_ids ?? [])];
  return {
    read_only: input?.read_only !== false,
    tags: input?.tags === undefined ? ['Analytics'] : canonicalTags(input.tags),
    sub_account_ids: subAccounts.includes('*') ? ['*'] : subAccounts,
    rate_limit_per_min: input?.rate_limit_per_min ?? SCOPED_KEY_DEFAULT_RATE_LIMIT,
  };
}

/**
 * Every id in sub_account_ids must be a client account of the key's owner (400
 * naming the first that is not), so a key never carries a grant its owner could
 * not give. `["*"]` is accepted from any account: it means "the accounts this
 * account manages", which for a non-agency is none, so it grants nothing there;
 * the relation is still checked on every request.
 */
export async function assertOwnClients(em: EntityManager, accountId: string, scopes: Scopes): Promise<void> {
  const ids = scopes.sub_account_ids.filter((id) => id !== '*');
  if (ids.length === 0) return;
  const clients = await em.find(Account, { id: { $in: ids }, agency: accountId }, { fields: ['id'] });
  const found = new Set(clients.map((client) => client.id));
  const stranger = ids.find((id) => !found.has(id));
  if (stranger !== undefined) {
    throw new InvalidInputError(`scopes.sub_account_ids: "${stranger}" is not a client account you manage`);
  }
}

export function expiryFrom(value: string | null | undefined): Date | null {
  if (value === undefined || value === null) return null;
  const expiresAt = new Date(value);
  if (expiresAt.getTime() <= Date.now()) throw new InvalidInputError('expires_at must be in the future');
  return expiresAt;
}
