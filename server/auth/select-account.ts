// The account a request acts on: the caller's own, or, with `userId`, a client account its
// agency manages (and a scoped key's `sub_account_ids` allow); and any other account, or
// section, the procedure's input asks for passes the same scope rules before the domain runs.
import { ForbiddenError } from '../errors.ts';
import {
  assertAccountInScope,
  assertEveryClientInScope,
  assertProcedureAllowed,
  scopeDenied,
  type Credential,
  type SectionWhenSet,
  type TargetAccount,
} from './scopes.ts';

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
  if ('everyClientWhenSet' in target) {
    if ((await inputField(readInput, target.everyClientWhenSet)) === true) assertEveryClientInScope(credential);
    return;
  }
  const value = await inputField(readInput, target.inputField);
  // Absent: nothing names another account (and the input parser refuses a missing id).
  if (value === undefined || value === null) return;
  assertAccountInScope(credential, String(value));
}

/** A flag of the input that needs another section is held to the key's sections like the procedure's own. */
export async function assertSectionWhenSetAllowed(
  credential: Credential,
  rule: SectionWhenSet | undefined,
  readInput: (() => Promise<unknown>) | undefined,
): Promise<void> {
  if (!rule || credential.type !== 'scoped') return;
  // Only `true` widens the call: any other value is false, absent, or refused by the input parser.
  if ((await inputField(readInput, rule.field)) === true) assertProcedureAllowed(credential, rule);
}

/** One field of the unparsed input. */
async function inputField(readInput: (() => Promise<unknown>) | undefined, field: string): Promise<unknown> {
  // Default-deny: an input that cannot be read is not allowed.
  if (!readInput) throw scopeDenied('This API key is not allowed to act on that account');
  const input = await readInput();
  return input !== null && typeof input === 'object' ? (input as Record<string, unknown>)[field] : undefined;
}
