// GET /api-keys/usage: the calling credential's budget in the current window,
// as the authentication statement read it (the usage request itself is counted
// apart and spends none of it; see limits.ts). `used` is the tokens leased for the key's bucket by
// every API process in this window minus those the answering process still holds
// unspent: it includes tokens other processes hold but have not spent yet (at most
// one block each), so `remaining` never overstates; on one process it is exact.
import { WINDOW_SECONDS, windowResetsAt, type RateLimitState } from './limits.ts';

export type RateLimitUsage = {
  limit: number;
  window_seconds: number;
  used: number;
  remaining: number;
  window_resets_at: string;
};

export function describeUsage(state: RateLimitState): { usage: RateLimitUsage; note?: string } {
  const { limit, used } = state.credential;
  const usage = {
    limit,
    window_seconds: WINDOW_SECONDS,
    used,
    remaining: Math.max(0, limit - used),
    window_resets_at: windowResetsAt(state),
  };
  if (used > 0) return { usage };
  return {
    usage,
    note: 'No request has been counted for this key in the current window yet; usage requests are counted apart, not in this budget.',
  };
}
