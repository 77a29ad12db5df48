// The tokens this process holds for API-key and account buckets: a cache of blocks leased
// from `rate_counters` (see spend-key-tokens.ts), spent one per request without a write. The
// budget itself lives in the database; a process that dies loses at most its unspent blocks,
// so a budget is never exceeded, only under-used. At most one lease per bucket is in flight
// in a process: a request that finds no token while another request leases waits for that
// lease instead of leasing a second block (which could strand tokens in this process).

type BucketTokens = {
  /** The window (epoch seconds, database clock) `unspent` and `leased` belong to. */
  window: number | null;
  unspent: number;
  /** Tokens this process leased in `window`. */
  leased: number;
  /** The window in which the last lease found the bucket spent. */
  exhaustedWindow: number | null;
  /** Settles when the lease in flight has been recorded. */
  leasing: Promise<void> | null;
  settleLease: (() => void) | null;
};

/** What a request holds for one bucket before its statement tells it the current window. */
export type Claim =
  /** One unspent token of `window`, taken from this process's block. */
  | { kind: 'token'; window: number }
  /** The bucket was spent in `window` when last leased: refused unless the window moved on. */
  | { kind: 'exhausted'; window: number }
  /** This request leases the next block for the process (the statement's upsert). */
  | { kind: 'lease' };

export class LeasedTokens {
  private readonly buckets = new Map<string, BucketTokens>();

  private bucket(name: string): BucketTokens {
    let bucket = this.buckets.get(name);
    if (!bucket) {
      bucket = { window: null, unspent: 0, leased: 0, exhaustedWindow: null, leasing: null, settleLease: null };
      this.buckets.set(name, bucket);
    }
    return bucket;
  }

  /**
   * A token when the process holds one; otherwise the lease (or the wait for the one in flight).
   * `currentWindow`, when the caller knows the database is in it, drops tokens and a refusal of
   * earlier windows first, so the claim leases at once rather than after a statement that
   * shows the window has moved on.
   */
  async claim(name: string, currentWindow?: number): Promise<Claim> {
    const bucket = this.bucket(name);
    if (currentWindow !== undefined && !bucket.leasing) {
      if (bucket.window !== null && bucket.window < currentWindow) {
        // Not moved to currentWindow: the lease's statement says which window its tokens are of.
        bucket.window = null;
        bucket.unspent = 0;
        bucket.leased = 0;
      }
      if (bucket.exhaustedWindow !== null && bucket.exhaustedWindow < currentWindow) bucket.exhaustedWindow = null;
    }
    for (;;) {
      if (bucket.unspent > 0 && bucket.window !== null) {
        bucket.unspent--;
        return { kind: 'token', window: bucket.window };
      }
      if (bucket.leasing) {
        await bucket.leasing;
        continue;
      }
      if (bucket.exhaustedWindow !== null) return { kind: 'exhausted', window: bucket.exhaustedWindow };
      bucket.leasing = new Promise((resolve) => (bucket.settleLease = resolve));
      return { kind: 'lease' };
    }
  }

  /** Records a lease's outcome: `granted` tokens of `window`, one of which the leasing request spends. */
  recordLease(name: string, window: number, granted: number): void {
    const bucket = this.bucket(name);
    this.moveTo(bucket, window);
    // A lease of a window the bucket has already left (another request's statement showed the
    // next one): its tokens are that window's budget, so none of them joins the later block.
    if (bucket.window !== window) {
      this.settle(bucket);
      return;
    }
    if (granted > 0) {
      bucket.leased += granted;
      bucket.unspent += granted - 1;
      bucket.exhaustedWindow = null;
    } else {
      bucket.exhaustedWindow = window;
    }
    this.settle(bucket);
  }

  /**
   * Adds the tokens of a lease made without claiming the bucket first (a key's first request,
   * whose account this process did not know yet): all of them join the block.
   */
  addLease(name: string, window: number, granted: number): void {
    const bucket = this.bucket(name);
    this.moveTo(bucket, window);
    if (bucket.window !== window) return;
    if (granted > 0) {
      bucket.leased += granted;
      bucket.unspent += granted;
      bucket.exhaustedWindow = null;
    } else {
      bucket.exhaustedWindow = window;
    }
  }

  /** The statement showed the database is in `window`: tokens and refusals of earlier windows no longer apply. */
  observeWindow(name: string, window: number): void {
    const bucket = this.bucket(name);
    this.moveTo(bucket, window);
    if (bucket.exhaustedWindow !== null && bucket.exhaustedWindow !== window) bucket.exhaustedWindow = null;
  }

  /**
   * Forgets what the process knew of the bucket's window after its limit changed: a refusal
   * no longer stands, and the tokens it holds are dropped; returns them with their window
   * (for the caller to hand back to the database).
   */
  limitChanged(name: string): { window: number; tokens: number } | null {
    const bucket = this.buckets.get(name);
    if (!bucket) return null;
    const dropped = bucket.window !== null && bucket.unspent > 0 ? { window: bucket.window, tokens: bucket.unspent } : null;
    bucket.leased -= bucket.unspent;
    bucket.unspent = 0;
    bucket.exhaustedWindow = null;
    return dropped;
  }

  /** Returns an unused claim: a token goes back to the block, an unused lease lets the next request lease. */
  giveBack(name: string, claim: Claim): void {
    const bucket = this.bucket(name);
    if (claim.kind === 'token' && bucket.window === claim.window) bucket.unspent++;
    if (claim.kind === 'lease') this.settle(bucket);
  }

  /**
   * Tokens of the bucket's current window spent by every process as far as this process can
   * tell: the database's leased count (or this process's own leases, if later), minus the
   * tokens this process still holds. Tokens other processes hold unspent count as used, so
   * `limit - used` never overstates what the budget still has.
   */
  used(name: string, window: number, databaseCount: number): number {
    const bucket = this.buckets.get(name);
    if (!bucket || bucket.window !== window) return databaseCount;
    return Math.max(0, Math.max(databaseCount, bucket.leased) - bucket.unspent);
  }

  /** Forgets buckets whose tokens belong to windows before `window` (nothing in flight); their names. */
  forgetBefore(window: number): string[] {
    const forgotten: string[] = [];
    for (const [name, bucket] of this.buckets) {
      if (bucket.leasing || (bucket.window !== null && bucket.window >= window)) continue;
      this.buckets.delete(name);
      forgotten.push(name);
    }
    return forgotten;
  }

  private moveTo(bucket: BucketTokens, window: number): void {
    if (bucket.window === window) return;
    if (bucket.window !== null && bucket.window > window) return;
    bucket.window = window;
    bucket.unspent = 0;
    bucket.leased = 0;
  }

  private settle(bucket: BucketTokens): void {
    const settle = bucket.settleLease;
    bucket.leasing = null;
    bucket.settleLease = null;
    settle?.();
  }
}
