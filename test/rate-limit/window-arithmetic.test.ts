// Limits: fixed 60-second windows; what a counted request reports (RateLimit headers,
// usage's window_resets_at) and the 429 with Retry-After when a budget refused it.
import { describe, expect, test } from 'vitest';
import { ApiError } from '../../server/errors.ts';
import { rateLimitRefusals } from '../../server/metrics/registry.ts';
import {
  ACCOUNT_RATE_CEILING,
  assertWithinBudget,
  epochSql,
  MAIN_KEY_RATE_LIMIT,
  rateLimitHeaders,
  SCOPED_KEY_DEFAULT_RATE_LIMIT,
  SCOPED_KEY_MAX_RATE_LIMIT,
  secondsUntilReset,
  WINDOW_SECONDS,
  WINDOW_START_SQL,
  windowResetsAt,
  type RateLimitState,
} from '../../server/rate-limit/limits.ts';

const WINDOW_START = 1_767_268_800; // 2026-01-01T12:00:00Z, a minute boundary

function state(overrides: Partial<RateLimitState> = {}): RateLimitState {
  return {
    counted: true,
    refusedBy: null,
    policy: 'main-key',
    windowStart: WINDOW_START,
    now: WINDOW_START + 15.2,
    credential: { limit: MAIN_KEY_RATE_LIMIT, used: 10 },
    account: { limit: ACCOUNT_RATE_CEILING, used: 25 },
    ...overrides,
  };
}

test("the spec's numbers", () => {
  expect([WINDOW_SECONDS, MAIN_KEY_RATE_LIMIT, ACCOUNT_RATE_CEILING, SCOPED_KEY_DEFAULT_RATE_LIMIT, SCOPED_KEY_MAX_RATE_LIMIT]).toEqual([60, 300, 1200, 60, 300]);
});

test('windows are 60-second bins of the database clock from the epoch, read as float8 epoch seconds', () => {
  expect(WINDOW_START_SQL).toBe("date_bin('60 seconds', now(), 'epoch')");
  expect(epochSql('clock.now')).toBe("date_part('epoch', clock.now)");
});

describe('secondsUntilReset', () => {
  test('whole seconds left in the window, rounded up', () => {
    expect(secondsUntilReset(state())).toBe(45);
    expect(secondsUntilReset(state({ now: WINDOW_START }))).toBe(60);
    expect(secondsUntilReset(state({ now: WINDOW_START + 58.5 }))).toBe(2);
  });

  test('never less than 1, even at or past the window end', () => {
    expect(secondsUntilReset(state({ now: WINDOW_START + 59.9 }))).toBe(1);
    expect(secondsUntilReset(state({ now: WINDOW_START + 60 }))).toBe(1);
    expect(secondsUntilReset(state({ now: WINDOW_START + 75 }))).toBe(1);
  });
});

test('windowResetsAt is the end of the window as ISO 8601', () => {
  expect(windowResetsAt(state())).toBe('2026-01-01T12:01:00.000Z');
});

describe('rateLimitHeaders', () => {
  test('policy and remaining budget of the credential and the account, with the reset time', () => {
    expect(rateLimitHeaders(state({ policy: 'scoped-key', credential: { limit: 60, used: 59 } }))).toEqual({
      'RateLimit-Policy': '"scoped-key";q=60;w=60, "account";q=1200;w=60',
      RateLimit: '"scoped-key";r=1;t=45, "account";r=1175;t=45',
    });
  });

  test('remaining never goes below 0', () => {
    const headers = rateLimitHeaders(state({ credential: { limit: 300, used: 301 }, account: { limit: 1200, used: 1200 } }));
    expect(headers.RateLimit).toBe('"main-key";r=0;t=45, "account";r=0;t=45');
  });
});

async function apiKeyRefusals(): Promise<number> {
  const { values } = await rateLimitRefusals.get();
  return values.find((value) => value.labels.limiter === 'api_key')?.value ?? 0;
}

describe('assertWithinBudget', () => {
  test('passes when no budget refused the request', () => {
    expect(() => assertWithinBudget(state())).not.toThrow();
    expect(() => assertWithinBudget(state({ credential: { limit: 300, used: 300 } }))).not.toThrow();
  });

  test.each(['credential', 'account'] as const)('a refusal by the %s budget is 429 with Retry-After and the RateLimit headers', async (refusedBy) => {
    const refused = state({ refusedBy, now: WINDOW_START + 50.5 });
    const refusalsBefore = await apiKeyRefusals();
    try {
      assertWithinBudget(refused);
    } catch (error) {
      expect(error).toBeInstanceOf(ApiError);
      expect((error as ApiError).status).toBe(429);
      expect((error as ApiError).message).toBe('Rate limit exceeded, please try again later');
      expect((error as ApiError).headers).toEqual({ 'Retry-After': '10', ...rateLimitHeaders(refused) });
      // GET /metrics counts it as the API-key limiter's refusal.
      expect(await apiKeyRefusals()).toBe(refusalsBefore + 1);
      return;
    }
    throw new Error('expected a 429');
  });
});
