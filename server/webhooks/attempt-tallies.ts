// The delivery log in figures: how many webhook attempts were delivered or failed, and how
// long they took, per 10-second slice (`webhook_attempt_tallies`), so the metrics' trailing
// window reads a few tally rows however many attempts it holds. A round's tally is written
// with its attempt rows, by the one writer of attempts (sql/record-attempts.ts), on a row of
// its database connection's own, so concurrent rounds never wait on one another's tally.
// Durations are counted in fixed buckets; a quantile is estimated within its bucket, as a
// Prometheus histogram's is. Their statements: sql/attempt-tallies.ts.

/** Lower bounds of the duration buckets, ms: the last bucket has no upper bound. */
export const DURATION_BOUNDS_MS = [0, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10_000, 30_000, 60_000] as const;

/** Each tally row covers this many seconds of attempts. */
export const TALLY_SLICE_SECONDS = 10;

export type Tally = { delivered: number; failed: number; durations: number[] };

/** The index of the bucket a duration falls in. */
function bucketOf(durationMs: number): number {
  let index = 0;
  while (index + 1 < DURATION_BOUNDS_MS.length && durationMs >= DURATION_BOUNDS_MS[index + 1]!) index++;
  return index;
}

/**
 * The tally of some attempts: delivered as the sender judged them (an attempt with no error:
 * a 2xx answer, server/outbound/http-client.ts), failed otherwise.
 */
export function tallyOf(attempts: readonly { error: string | null; durationMs: number }[]): Tally {
  const durations = DURATION_BOUNDS_MS.map(() => 0);
  let ok = 0;
  for (const attempt of attempts) {
    if (attempt.error === null) ok++;
    durations[bucketOf(attempt.durationMs)]!++;
  }
  return { delivered: ok, failed: attempts.length - ok, durations };
}

/** The sum of tallies (rows of other bucket bounds count in the buckets both have). */
export function sumTallies(tallies: readonly Tally[]): Tally {
  const sum: Tally = { delivered: 0, failed: 0, durations: DURATION_BOUNDS_MS.map(() => 0) };
  for (const tally of tallies) {
    sum.delivered += tally.delivered;
    sum.failed += tally.failed;
    tally.durations.forEach((count, index) => {
      if (index < sum.durations.length) sum.durations[index]! += count;
    });
  }
  return sum;
}

/**
 * The duration at quantile `q` (0–1), ms, estimated by linear interpolation within the bucket
 * the quantile falls in; the lower bound of the last bucket when it falls there (it has no
 * upper bound), null when nothing was counted.
 */
export function durationQuantile(durations: readonly number[], q: number): number | null {
  const total = durations.reduce((sum, count) => sum + count, 0);
  if (total === 0) return null;
  const rank = q * total;
  let below = 0;
  for (let index = 0; index < durations.length; index++) {
    const count = durations[index]!;
    if (count > 0 && below + count >= rank) {
      const lower = DURATION_BOUNDS_MS[index]!;
      const upper = DURATION_BOUNDS_MS[index + 1];
      return upper === undefined ? lower : lower + ((upper - lower) * Math.max(0, rank - below)) / count;
    }
    below += count;
  }
  return DURATION_BOUNDS_MS[DURATION_BOUNDS_MS.length - 1]!;
}
