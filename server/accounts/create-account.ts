// An account as the operator creates it (admin CLI), with its main key.
import { UniqueConstraintViolationException, type EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { issueMainKey } from '../api-keys/main-key.ts';
import { Account } from '../db/entities/index.ts';
import { newId } from '../db/ids.ts';
import { ConflictError } from '../errors.ts';
import { columnInteger } from '../input-rules.ts';
import type { Secrets } from '../secrets.ts';
import { toAccountSummary, type AccountSummary } from './account-summary.ts';
import { PLANS } from '../plans.ts';

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
      return { ...toAccountSummary(account), apiKey };
    });
  } catch (error) {
    if (error instanceof UniqueConstraintViolationException) {
      if (/oidc_subject/.test(error.message)) throw new ConflictError('Another account already has that OIDC subject');
      throw new ConflictError('An account with that e-mail already exists');
    }
    throw error;
  }
}
