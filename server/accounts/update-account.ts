// An account as the operator changes it (admin CLI): plan, features, credits, sign-in subject.
import { UniqueConstraintViolationException, type EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { announceCredentialChange } from '../auth/credential-changes.ts';
import { Account } from '../db/entities/index.ts';
import { ConflictError, NotFoundError } from '../errors.ts';
import { columnInteger } from '../input-rules.ts';
import { toAccountSummary, type AccountSummary } from './account-summary.ts';
import { PLANS } from '../plans.ts';

export const AccountUpdateInput = z.object({
  userId: z.string().min(1, '--user is required'),
  plan: z.enum(PLANS, { error: '--plan must be pro or free' }).optional(),
  webhooks: z.boolean().optional(),
  credits: columnInteger('--credits').min(0, '--credits must not be negative').optional(),
  oidcSubject: z.string().min(1, '--oidc-subject must not be empty').optional(),
});
export type AccountUpdateInput = z.input<typeof AccountUpdateInput>;

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
      return toAccountSummary(account);
    });
  } catch (error) {
    if (error instanceof UniqueConstraintViolationException) throw new ConflictError('Another account already has that OIDC subject');
    throw error;
  }
}
