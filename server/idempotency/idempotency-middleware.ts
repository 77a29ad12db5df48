// The step of an account's procedure that claims its Idempotency-Key (idempotent-call.ts),
// once authentication has named the account acted on and the credential, and before the
// procedure runs: so refusals decided while authenticating (401, 429, the plan's and the key
// scopes' 403) are never stored. It does nothing where the surface set no key (the header
// absent, or a surface or method that does not honour it).
import type { AuthedContext } from '../auth/authenticate-middleware.ts';
import { middleware } from '../trpc-core.ts';
import { claimIdempotencyKey } from './idempotent-call.ts';

export const idempotencyClaim = middleware(async ({ ctx, next, getRawInput }) => {
  const call = ctx.idempotency;
  if (!call) return next();
  const { account, credential } = ctx as AuthedContext;
  await claimIdempotencyKey(ctx.services, call, { accountId: account.id, credential }, await getRawInput());
  return next();
});
