// WEBHOOK_RETRY_SCHEDULE (contract, configuration): the delays after the first attempt,
// `1m,5m,30m,2h` by default; a value that is not a list of durations stops the start.
import { expect, test } from 'vitest';
import { ConfigError, loadConfig } from '../../server/config.ts';
import { parseRetrySchedule } from '../../server/webhooks/retry-schedule.ts';

test('the default schedule is 1, 5 and 30 minutes and 2 hours after the first attempt', () => {
  expect(parseRetrySchedule('1m,5m,30m,2h')).toEqual({ delays: [60_000, 300_000, 1_800_000, 7_200_000] });
  expect(loadConfig({}).WEBHOOK_RETRY_SCHEDULE).toEqual([60_000, 300_000, 1_800_000, 7_200_000]);
});

test('each unit: milliseconds, seconds, minutes, hours', () => {
  expect(parseRetrySchedule('250ms,2s,3m,4h')).toEqual({ delays: [250, 2_000, 180_000, 14_400_000] });
  expect(parseRetrySchedule('0s,10s')).toEqual({ delays: [0, 10_000] });
});

test('spaces around items and empty items are ignored; an empty list retries nothing', () => {
  expect(parseRetrySchedule(' 1s , ,2s,')).toEqual({ delays: [1_000, 2_000] });
  expect(parseRetrySchedule('')).toEqual({ delays: [] });
  expect(loadConfig({ WEBHOOK_RETRY_SCHEDULE: ' 5s, 6s ' }).WEBHOOK_RETRY_SCHEDULE).toEqual([5_000, 6_000]);
});

test('an item that is not a whole number and a unit names itself in the refusal', () => {
  for (const item of ['soon', '1', 'm', '1d', '1.5s', '-1s', '1 s', '1sx', 'x1s', '1S', '1m5s']) {
    expect(parseRetrySchedule(`1m,${item},2h`), item).toEqual({ error: `"${item}" is not a duration like 30s, 5m or 2h` });
  }
});

test('a bad schedule stops the start with a message naming the variable', () => {
  expect(() => loadConfig({ WEBHOOK_RETRY_SCHEDULE: '1m,soon' })).toThrow(
    new ConfigError('invalid WEBHOOK_RETRY_SCHEDULE: "soon" is not a duration like 30s, 5m or 2h'),
  );
});
