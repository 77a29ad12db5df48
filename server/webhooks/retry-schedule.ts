// WEBHOOK_RETRY_SCHEDULE: the delays after a delivery's first attempt at which a failed one
// is tried again (plan-delivery-outcomes.ts), written as a comma list of durations.
const UNIT_MS = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 } as const;

const DURATION = /^(\d+)(ms|s|m|h)$/;

/** `1m,5m,30m,2h` as milliseconds (empty items skipped), or why the text is not a schedule. */
export function parseRetrySchedule(text: string): { delays: number[] } | { error: string } {
  const delays: number[] = [];
  for (const part of text.split(',').map((item) => item.trim()).filter(Boolean)) {
    const match = DURATION.exec(part);
    if (!match) return { error: `"${part}" is not a duration like 30s, 5m or 2h` };
    delays.push(Number(match[1]) * UNIT_MS[match[2] as keyof typeof UNIT_MS]);
  }
  return { delays };
}
