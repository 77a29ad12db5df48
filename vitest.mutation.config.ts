// The tests `npm run test:mutation` runs under StrykerJS: the ones that exercise the rule
// modules directly, without a database or a server, so each mutant is judged in
// milliseconds. stryker.config.json lists the modules mutated.
import { defineConfig } from 'vitest/config';

export const MUTATION_TESTS = [
  'test/messaging/template-variables.test.ts',
  'test/messaging/callback-signature.test.ts',
  'test/webhooks/signature.test.ts',
  'test/webhooks/retry-plan.test.ts',
  'test/webhooks/retry-schedule.test.ts',
  'test/pagination/cursors.test.ts',
  'test/widgets/visitor-token.test.ts',
  'test/outbound/address-guard.test.ts',
  'test/outbound/address-classification.test.ts',
  'test/auth/scopes.test.ts',
  'test/auth/credential-resolution.test.ts',
  'test/auth/id-token-verification.test.ts',
  'test/auth/authorized-stream.test.ts',
  'test/auth/credential-cache-rules.test.ts',
  'test/auth/caller-read-rules.test.ts',
  'test/input/input-rule-walk.test.ts',
  'test/input/stated-patterns.test.ts',
  'test/rate-limit/window-arithmetic.test.ts',
  'test/rate-limit/leased-tokens.test.ts',
  'test/security/secret-derivation.test.ts',
  'test/idempotency/fingerprint-and-replay.test.ts',
  'test/credits/credit-arithmetic.test.ts',
  'test/messaging/provider-send-failure.test.ts',
];

export default defineConfig({
  test: {
    include: MUTATION_TESTS,
    pool: 'threads',
    testTimeout: 30_000,
  },
});
