// How the operator sees an account (admin CLI output).
import type { Account } from '../db/entities/index.ts';

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

export function toAccountSummary(account: Account): AccountSummary {
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
