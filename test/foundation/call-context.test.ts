// A call's context as the procedures see it over HTTP (server/http/procedure-pipeline.ts): a step
// that extends it (`next({ ctx })`) adds to it without losing what it had, the call's
// EntityManager is forked only when used and is the same one before and after an extension,
// and each call has its own.
import { z } from 'zod';
import { expect, test } from 'vitest';
import { appRouter } from '../../routers/index.ts';
import { accountProcedure, router } from '../../server/trpc.ts';
import { serviceForFile, type TestAccount } from '../helpers/service-for-file.ts';
import type { TestService } from '../helpers/service.ts';

type Held = { entities?: { em: unknown } };
/** The EntityManager each call's procedure used, in call order. */
const used: unknown[] = [];

const probe = accountProcedure
  .use(({ ctx, next }) => {
    const forkedBefore = (ctx as Held).entities?.em !== undefined;
    return next({ ctx: { probeMark: 'marked', probeForkedBefore: forkedBefore, probeEm: ctx.em } });
  })
  .meta({ openapi: { method: 'GET', path: '/test-call-context', protect: true }, section: 'Analytics', access: 'read' })
  .input(z.object({}))
  .output(z.object({ mark: z.string(), account: z.string(), forkedBefore: z.boolean(), sameEm: z.boolean() }))
  .query(({ ctx }) => {
    const extended = ctx as typeof ctx & { probeMark: string; probeForkedBefore: boolean; probeEm: unknown };
    used.push(ctx.em);
    return { mark: extended.probeMark, account: ctx.account.id, forkedBefore: extended.probeForkedBefore, sameEm: ctx.em === extended.probeEm };
  });

let service: TestService;
let account: TestAccount;

serviceForFile(
  { start: { definition: { router: router({ ...appRouter._def.record, testCallContext: probe }) } }, accounts: [{}] },
  (started) => ({ service, accounts: [account] } = started),
);

test('an extended context keeps the call, adds the extension and shares one lazily forked EntityManager', async () => {
  used.length = 0;
  const first = await service.request('GET', '/test-call-context', { apiKey: account.apiKey, unchecked: true });
  expect(first.status).toBe(200);
  // What the authentication step added (the account) and what the probe's step added, read
  // together; the EntityManager not forked before the step used it, then the same one after.
  expect(first.body).toEqual({ mark: 'marked', account: account.userId, forkedBefore: false, sameEm: true });
  // The rate-limit headers the authentication step set on the call's context reach the answer.
  expect(first.headers.get('ratelimit-policy')).toBeTruthy();
  const second = await service.request('GET', '/test-call-context', { apiKey: account.apiKey, unchecked: true });
  expect(second.body).toMatchObject({ sameEm: true });
  expect(used).toHaveLength(2);
  expect(used[0]).not.toBe(used[1]);
});
