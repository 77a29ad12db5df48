// Delivery rules 2, 4 and 5 as the sender plans a round, before anything is written:
// which failures are retried, at which offset from the first attempt, and what health counts.
import { describe, expect, test } from 'vitest';
import type { OutboundFailureType, OutboundResult } from '../../server/outbound/http-client.ts';
import { planDeliveryOutcomes, retryOffsetFor } from '../../server/webhooks/plan-delivery-outcomes.ts';
import type { ClaimedDelivery } from '../../server/webhooks/sql/claim-due-deliveries.ts';

const SCHEDULE = [60_000, 300_000, 1_800_000, 7_200_000];
const AT = Date.UTC(2026, 0, 1, 12, 0, 0);

function delivery(overrides: Partial<ClaimedDelivery> = {}): ClaimedDelivery {
  return {
    id: 'whd_1',
    subscriptionId: 'whs_1',
    accountId: 'usr_1',
    attempt: 1,
    eventName: 'Contact Created',
    body: '{}',
    url: 'https://receiver.example/hook',
    enabled: true,
    retriesEnabled: true,
    signingSecretSealed: null,
    urlDisabled: false,
    ...overrides,
  } as ClaimedDelivery;
}

const ok: OutboundResult = { delivered: true, statusCode: 200, durationMs: 12, failure: null };
const failed = (type: OutboundFailureType, statusCode: number | null = null): OutboundResult => ({
  delivered: false,
  statusCode,
  durationMs: 30,
  failure: { type, message: `${type} failure` },
});

describe('retryOffsetFor: retried 1 m, 5 m, 30 m and 2 h after the first attempt', () => {
  test.each([1, 2, 3, 4])('attempt %i that failed with a 5xx is retried at the schedule entry after it', (attempt) => {
    expect(retryOffsetFor({ attempt, retriesEnabled: true }, { type: 'temporary' }, SCHEDULE)).toBe(SCHEDULE[attempt - 1]);
  });

  test('time-outs and connection failures are retried; any 4xx and unknown failures are not', () => {
    expect(retryOffsetFor({ attempt: 1, retriesEnabled: true }, { type: 'timeout' }, SCHEDULE)).toBe(60_000);
    expect(retryOffsetFor({ attempt: 2, retriesEnabled: true }, { type: 'network' }, SCHEDULE)).toBe(300_000);
    expect(retryOffsetFor({ attempt: 1, retriesEnabled: true }, { type: 'permanent' }, SCHEDULE)).toBeNull();
    expect(retryOffsetFor({ attempt: 1, retriesEnabled: true }, { type: 'unknown' }, SCHEDULE)).toBeNull();
  });

  test('nothing is retried without the opt-in, and nothing after the last schedule entry', () => {
    expect(retryOffsetFor({ attempt: 1, retriesEnabled: false }, { type: 'temporary' }, SCHEDULE)).toBeNull();
    expect(retryOffsetFor({ attempt: 5, retriesEnabled: true }, { type: 'temporary' }, SCHEDULE)).toBeNull();
    expect(retryOffsetFor({ attempt: 1, retriesEnabled: true }, { type: 'timeout' }, [])).toBeNull();
  });
});

describe('planDeliveryOutcomes', () => {
  test('a success is recorded as an attempt and counts one success for its subscription and account', () => {
    const plan = planDeliveryOutcomes([{ delivery: delivery(), attemptedAtMs: AT, result: ok }], SCHEDULE);
    expect(plan.attempts).toEqual([{ id: expect.stringMatching(/^wha_/), deliveryId: 'whd_1', accountId: 'usr_1', subscriptionId: 'whs_1', attempt: 1, statusCode: 200, durationMs: 12, error: null }]);
    expect(plan.updates).toEqual([{ id: 'whd_1', status: 'succeeded', attempts: 1, attemptedAtMs: AT, statusCode: 200, error: null, retryOffsetMs: null }]);
    expect(plan.health).toEqual([
      { subscriptionId: 'whs_1', accountId: 'usr_1', successes: 1, failures: 0, trailingFailures: 0, lastSuccessAtMs: AT + 12, lastFailure: null },
    ]);
  });

  test('a retryable failure stays pending with its offset and does not count in health yet (Delivery rule 5)', () => {
    const plan = planDeliveryOutcomes([{ delivery: delivery({ attempt: 2 }), attemptedAtMs: AT, result: failed('temporary', 503) }], SCHEDULE);
    expect(plan.attempts[0]).toMatchObject({ attempt: 2, statusCode: 503, error: 'temporary: temporary failure' });
    expect(plan.updates).toEqual([{ id: 'whd_1', status: 'pending', attempts: 2, attemptedAtMs: AT, statusCode: 503, error: 'temporary: temporary failure', retryOffsetMs: 300_000 }]);
    expect(plan.health).toEqual([]);
  });

  test('the last failure, once retries are spent, fails the delivery and counts one failure', () => {
    const plan = planDeliveryOutcomes([{ delivery: delivery({ attempt: 5, eventName: 'Replies' }), attemptedAtMs: AT, result: failed('timeout') }], SCHEDULE);
    expect(plan.updates[0]).toMatchObject({ status: 'failed', retryOffsetMs: null, attempts: 5 });
    expect(plan.health).toEqual([
      {
        subscriptionId: 'whs_1',
        accountId: 'usr_1',
        successes: 0,
        failures: 1,
        trailingFailures: 1,
        lastSuccessAtMs: null,
        lastFailure: {
          at: new Date(AT + 30).toISOString(),
          delivery_id: 'whd_1',
          event: 'Replies',
          status_code: null,
          error: 'timeout failure',
          failure_type: 'timeout',
        },
      },
    ]);
  });

  test('a 4xx fails at once, even with retries on', () => {
    const plan = planDeliveryOutcomes([{ delivery: delivery(), attemptedAtMs: AT, result: failed('permanent', 410) }], SCHEDULE);
    expect(plan.updates[0]).toMatchObject({ status: 'failed', statusCode: 410 });
    expect(plan.health[0]).toMatchObject({ failures: 1, trailingFailures: 1 });
  });

  test('a dropped delivery is neither attempted nor counted (Delivery rule 4)', () => {
    const plan = planDeliveryOutcomes([{ delivery: delivery(), dropped: 'subscription switched off' }], SCHEDULE);
    expect(plan.attempts).toEqual([]);
    expect(plan.updates).toEqual([
      { id: 'whd_1', status: 'dropped', attempts: null, attemptedAtMs: null, statusCode: null, error: 'dropped: subscription switched off', retryOffsetMs: null },
    ]);
    expect(plan.health).toEqual([]);
  });

  test('health is summed per subscription and account: a success after failures ends the trailing run', () => {
    const plan = planDeliveryOutcomes(
      [
        { delivery: delivery({ id: 'whd_1' }), attemptedAtMs: AT, result: failed('permanent', 400) },
        { delivery: delivery({ id: 'whd_2' }), attemptedAtMs: AT + 1, result: failed('permanent', 404) },
        { delivery: delivery({ id: 'whd_3' }), attemptedAtMs: AT + 2, result: ok },
        { delivery: delivery({ id: 'whd_4', accountId: 'usr_2' }), attemptedAtMs: AT + 3, result: failed('permanent', 400) },
        { delivery: delivery({ id: 'whd_5', subscriptionId: 'whs_2' }), attemptedAtMs: AT + 4, result: ok },
      ],
      SCHEDULE,
    );
    expect(plan.health).toHaveLength(3);
    expect(plan.health[0]).toMatchObject({ subscriptionId: 'whs_1', accountId: 'usr_1', successes: 1, failures: 2, trailingFailures: 0, lastSuccessAtMs: AT + 2 + 12 });
    expect(plan.health[0]!.lastFailure).toMatchObject({ delivery_id: 'whd_2', status_code: 404 });
    expect(plan.health[1]).toMatchObject({ subscriptionId: 'whs_1', accountId: 'usr_2', successes: 0, failures: 1, trailingFailures: 1 });
    expect(plan.health[2]).toMatchObject({ subscriptionId: 'whs_2', accountId: 'usr_1', successes: 1, failures: 0 });
  });
});
