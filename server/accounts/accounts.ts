// Accounts as the operator creates and changes them (admin CLI).
import { UniqueConstraintViolationException, type EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { Account } from '../db/entities/index.ts';
import { newId } from '../db/ids.ts';
import { issueMainKey } from '../api-keys/main-key.ts';
import { announceCredentialChange } from '../auth/credential-changes.ts';
import { ConflictError, NotFoundError } from '../errors.ts';
import { columnInteger } from '../input-rules.ts';
import type { Secrets } from '../secrets.ts';
import { PLANS } from './plans.ts';

export const AccountCreateInput = z.object({
  email: z.email('--email must be a valid e-mail address'),
  name: z.string().min(1).optional(),
  plan: z.enum(PLANS, { error: '--plan must be pro or free' }).default('pro'),
  agency: z.boolean().default(false),
  webhooks: z.boolean().default(true),
  credits: columnInteger('--credits').min(0, '--credits must not be negative').default(1000),
  /** The identity provider's subject that signs in to this account (ID-token sessions). */
  oidcSubject: z.string().min(1, '--oidc-subject must not be empty').optional(),
});
export type AccountCreateInput = z.input<typeof AccountCreateInput>;

export const AccountUpdateInput = z.object({
  userId: z.string().min(1, '--user is required'),
  plan: z.enum(PLANS, { error: '--plan must be pro or free' }).optional(),
  webhooks: z.boolean().optional(),
  credits: columnInteger('--credits').min(0, '--credits must not be negative').optional(),
  oidcSubject: z.string().min(1, '--oidc-subject must not be empty').optional(),
});
export type AccountUpdateInput = z.input<typeof AccountUpdateInput>;

export type AccountSummary = {
  userId: string;
  email: string;
  plan: string;
  agency: boolean;
  webhooks: boolean;
  credits: number;
  /** Only present when set. */
  oidcSubject?: string;
};

function summarise(account: Account): AccountSummary {
  return {
    userId: account.id,
    email: account.email,
    plan: account.plan,
    agency: account.isAgency,
    webhooks: account.webhooksEnabled,
    credits: account.credits,
    ...(account.oidcSubject ? { oidcSubject: account.oidcSubject } : {}),
  };
}

export async function createAccount(
  em: EntityManager,
  secrets: Secrets,
  rawInput: AccountCreateInput,
): Promise<AccountSummary & { apiKey: string }> {
  const input = AccountCreateInput.parse(rawInput);
  try {
    return await em.transactional(async (tx) => {
      const account = tx.create(Account, {
        id: newId('usr'),
        email: input.email.toLowerCase(),
        name: input.name ?? null,
        plan: input.plan,
        isAgency: input.agency,
        webhooksEnabled: input.webhooks,
        credits: input.credits,
        monthlyCredits: Math.max(input.credits, 1),
        oidcSubject: input.oidcSubject ?? null,
      });
      tx.persist(account);
      await tx.flush();
      const apiKey = await issueMainKey(tx, secrets, account.id);
      return { ...summarise(account), apiKey };
    });
  } catch (error) {
    if (error instanceof UniqueConstraintViolationException) {
      if (/oidc_subject/.test(error.message)) throw new ConflictError('Another account already has that OIDC subject');
      throw new ConflictError('An account with that e-mail already exists');
    }
    throw error;
  }
}

export async function updateAccount(em: EntityManager, rawInput: AccountUpdateInput): Promise<AccountSummary> {
  const input = AccountUpdateInput.parse(rawInput);
  try {
    return await em.transactional(async (tx) => {
      const account = await tx.findOne(Account, input.userId);
      if (!account) throw new NotFoundError(`No account ${input.userId}`);
      if (input.plan !== undefined) account.plan = input.plan;
      if (input.webhooks !== undefined) account.webhooksEnabled = input.webhooks;
      if (input.credits !== undefined) account.credits = input.credits;
      if (input.oidcSubject !== undefined) account.oidcSubject = input.oidcSubject;
      await tx.flush();
      // The plan and features decide what its credentials may do; live subscriptions check again.
      if (input.plan !== undefined || input.webhooks !== undefined || input.oidcSubject !== undefined) {
        await announceCredentialChange(tx, account.id);
      }
      return summarise(account);
    });
  } catch (error) {
    if (error instanceof UniqueConstraintViolationException) throw new ConflictError('Another account already has that OIDC subject');
    throw error;
  }
}
