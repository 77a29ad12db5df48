// A charged send the provider did not take (spec: a send fails with 400 or 500 only): the
// provider's refusal of the message is 400 provider_refused; a rate limit, a server error or
// no answer is 500 "nothing was sent or charged"; an acceptance without a message id is 500
// without that promise, since the message may be on its way.
import { expect, test } from 'vitest';
import { PROVIDER_UNAVAILABLE, providerSendFailure } from '../../server/messaging/provider-send-failure.ts';

const failure = (status: number | null) => providerSendFailure({ ok: false, status, retryable: false, message: `provider said ${status}` });

test('a 4xx refusal is 400 provider_refused with the provider message', () => {
  for (const status of [400, 404, 499]) {
    const error = failure(status);
    expect([error.status, error.reason, error.message], String(status)).toEqual([400, 'provider_refused', `provider said ${status}`]);
  }
});

test('a rate limit, a 5xx or no answer is 500 provider_unavailable: nothing was sent or charged', () => {
  expect(PROVIDER_UNAVAILABLE).toBe('The messaging provider did not answer; nothing was sent or charged');
  for (const status of [429, 500, 503, null]) {
    const error = failure(status);
    expect([error.status, error.reason, error.message, error.outside], String(status)).toEqual([500, 'provider_unavailable', PROVIDER_UNAVAILABLE, `provider said ${status}`]);
  }
});

test('an acceptance without a message id is 500 provider_unreadable with the provider message', () => {
  for (const status of [200, 399]) {
    const error = failure(status);
    expect([error.status, error.reason, error.message, error.outside], String(status)).toEqual([500, 'provider_unreadable', `provider said ${status}`, undefined]);
  }
});
