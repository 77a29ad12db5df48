// The step of an account's procedure that authenticates its call: resolves the credential,
// counts the request against its rate limits (one decision, whose headers the answer
// carries), applies the key's scopes to the procedure's meta, selects the account acted on
// (and checks any target account the meta names in the raw input), and extends the call's
// context with them. A subscription is also held to its credential while it streams.
import { TRPCError } from '@trpc/server';
import { ApiError } from '../errors.ts';
import type { Services } from '../process-services.ts';
import { middleware, toTrpcError, type Context, type ProcedureMeta } from '../trpc-core.ts';
import { channelCounterFor, channelOwner, takeSubscriptionSlot } from '../trpc-limits.ts';
import { authenticate, credentialExpiry, type Authenticated } from './authenticate.ts';
import { whileAuthorized } from './authorized-stream.ts';

export type AuthedContext = Context & Authenticated;

export const authenticateAndCount = middleware(async ({ ctx, meta, next, getRawInput, type, signal }) => {
  const authenticated: Authenticated = await authenticate(ctx.services, ctx.request, meta, {
    counting: meta?.rateLimit === 'apart' ? 'apart' : 'budget',
    responseHeaders: ctx.responseHeaders,
    readInput: getRawInput,
    read: type === 'query' && meta?.callerRead ? meta.callerRead(await getRawInput()) : null,
  });
  if (type !== 'subscription') return next({ ctx: authenticated });
  return subscribeWhileAuthorized(ctx, authenticated, { meta, getRawInput, signal }, () => next({ ctx: authenticated }));
});

/**
 * Starts a subscription (taking one of its socket's slots) whose stream ends with the refusal a
 * new call would get once its credential no longer allows it (authorized-stream.ts).
 */
async function subscribeWhileAuthorized<R extends { ok: boolean; data?: unknown }>(
  ctx: Context,
  auth: Authenticated,
  procedure: { meta: ProcedureMeta | undefined; getRawInput: () => Promise<unknown>; signal: AbortSignal | undefined },
  next: () => Promise<R>,
): Promise<R> {
  const { services, channel } = ctx;
  const release = !channel
    ? () => {}
    : channel.socket
      ? takeSubscriptionSlot(channel.socket, procedure.signal)
      : openStreamChannel(services, auth, procedure.signal);
  let result: R;
  try {
    result = await next();
    if (!result.ok || !isAsyncIterable(result.data)) {
      release();
      return result;
    }
    const stream = whileAuthorized(result.data, {
      changes: services.credentialChanges,
      accountIds: [auth.credential.accountId, auth.account.id],
      log: services.log,
      isRefusal: (error) => error instanceof TRPCError,
      check: async () => {
        try {
          const again = await authenticate(services, ctx.request, procedure.meta, { counting: 'none', readInput: procedure.getRawInput });
          return await credentialExpiry(services, again.credential);
        } catch (error) {
          throw error instanceof ApiError ? toTrpcError(error) : error;
        }
      },
    });
    return { ...result, data: releasing(stream, release) };
  } catch (error) {
    release();
    throw error;
  }
}

/** A subscription over SSE is a long-lived channel of its own, counted like a socket. */
function openStreamChannel(services: Services, auth: Authenticated, signal: AbortSignal | undefined): () => void {
  const close = channelCounterFor(services).open(channelOwner(auth.credential));
  const release = () => {
    close();
    signal?.removeEventListener('abort', release);
  };
  signal?.addEventListener('abort', release, { once: true });
  return release;
}

function isAsyncIterable(value: unknown): value is AsyncIterable<unknown> {
  return value !== null && typeof value === 'object' && Symbol.asyncIterator in value;
}

/** The stream, giving its socket slot back when it ends (or its signal aborts first). */
async function* releasing<T>(stream: AsyncGenerator<T, void, undefined>, release: () => void): AsyncGenerator<T, void, undefined> {
  try {
    yield* stream;
  } finally {
    release();
  }
}
