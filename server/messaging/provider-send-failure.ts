// What a charged send (charged-send.ts) answers when the provider did not take the message:
// its refusal of the request is the caller's 400; anything else is a 500, worded by whether
// the message may still be on its way. The spec allows a send no other failure.
import { ApiError, InvalidInputError } from '../errors.ts';
import type { ProviderSendResult } from './provider.ts';

export const PROVIDER_UNAVAILABLE = 'The messaging provider did not answer; nothing was sent or charged';

/** The provider's refusal as a send's 400 or 500. */
export function providerSendFailure(result: Extract<ProviderSendResult, { ok: false }>): ApiError {
  // A 429 is the provider's rate limit, not a refusal of this message.
  const refused = result.status !== null && result.status >= 400 && result.status < 500 && result.status !== 429;
  if (refused) return new InvalidInputError(result.message, { reason: 'provider_refused' });
  // Accepted without an id: the message may be on its way, so "nothing was sent" would be untrue.
  if (result.status !== null && result.status < 400) return new ApiError(500, result.message, { reason: 'provider_unreadable' });
  return new ApiError(500, PROVIDER_UNAVAILABLE, { reason: 'provider_unavailable', outside: result.message });
}
