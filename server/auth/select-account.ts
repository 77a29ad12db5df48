// The account a request acts on: the caller's own, or, with `userId`, a client account its
// agency manages (and a scoped key's `sub_account_ids` allow); and any other account the
// procedure's input names passes the same scope rule before the domain runs.
import { ForbiddenError } from '../errors.ts';
import { assertAccountInScope, assertEveryClientInScope, scopeDenied, type Credential, type TargetAccount } from './scopes.ts';

export type SelectedAccount = {
  /** The account the request acts on. */
  id: string;
  /** True when an agency acts on one of its client accounts. */
  managed: boolean;
};

/**
 * `userId` selects the caller's own account (the default) or a client account it
 * manages; `targetAgencyId` is that account's agency as read by this request's
 * statement, so the relation is never cached.
 */
export function selectAccount(
  credential: Credential,
  userId: string | null,
  targetAgencyId: string | null,
  options: { agencyOnly?: boolean; ownAccountOnly?: boolean } = {},
): SelectedAccount {
  // These refuse userId even when it names the caller's own account: the parameter has no place there.
  if (userId !== null && options.agencyOnly) throw new ForbiddenError('userId cannot be used on agency-only endpoints');
  if (userId !== null && options.ownAccountOnly) throw new ForbiddenError('userId cannot be used on key management endpoints');
  if (userId === null || userId === credential.accountId) return { id: credential.accountId, managed: false };
  assertAccountInScope(credential, userId);
  if (targetAgencyId !== credential.accountId) {
    if (credential.type === 'scoped') throw scopeDenied('This API key is not allowed to act on that account');
    throw new ForbiddenError('You do not have access to that account');
  }
  return { id: userId, managed: true };
}

/**
 * A client account named in the input (not by `userId`) passes the same
 * sub_account_ids rule, before the input is parsed or the domain runs.
 */
export async function assertTargetAccountAllowed(
  credential: Credential,
  target: TargetAccount | undefined,
  readInput: (() => Promise<unknown>) | undefined,
): Promise<void> {
  if (!target || credential.type !== 'scoped') return;
  if (target === 'everyClient') return assertEveryClientInScope(credential);
  // Default-deny: a target that cannot be read is not allowed.
  if (!readInput) throw scopeDenied('This API key is not allowed to act on that account');
  const input = await readInput();
  const value = input !== null && typeof input === 'object' ? (input as Record<string, unknown>)[target.inputField] : undefined;
  // Absent: nothing names another account (and the input parser refuses a missing id).
  if (value === undefined || value === null) return;
  assertAccountInScope(credential, String(value));
}
