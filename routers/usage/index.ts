// Usage limits: the selected account's credit allowance, and an agency's
// changes to a client account's allowance.
import { z } from 'zod';
import { getUsageLimits, updateSubAccountUsageLimits, UsageLimits, UsageLimitsUpdateInput } from '../../server/credits/usage-limits.ts';
import { accountProcedure, router } from '../../server/trpc.ts';
import { AT_LEAST_ONE_FIELD } from '../../server/http/openapi.ts';

const UsageLimitsData = z.object({ success: z.literal(true), data: UsageLimits });

export const usageRouter = router({
  get: accountProcedure
    .meta({
      openapi: { method: 'GET', path: '/usage-limits', tags: ['Usage'], summary: "The selected account's credits and monthly allowance" },
      section: 'Usage',
      access: 'read',
    })
    .input(z.object({}))
    .output(UsageLimitsData)
    .query(async ({ ctx }) => ({ success: true as const, data: await getUsageLimits(ctx.em, ctx.account.id) })),

  updateSubAccount: accountProcedure
    .meta({
      openapi: {
        method: 'PUT',
        path: '/sub-accounts/{id}/usage-limits',
        tags: ['Sub Accounts'],
        summary: "Change a client account's monthly credits, balance or roll-over (agency only); raising the balance emits Credits Recharged",
      },
      section: 'Sub Accounts',
      access: 'write',
      agencyOnly: true,
      targetAccount: { inputField: 'id' },
      errorShapes: { '404': 'envelope' },
      bodyConstraints: AT_LEAST_ONE_FIELD,
    })
    .input(UsageLimitsUpdateInput.extend({ id: z.string() }))
    .output(UsageLimitsData)
    .mutation(async ({ ctx, input }) => {
      const { id, ...fields } = input;
      return { success: true as const, data: await updateSubAccountUsageLimits(ctx.em, ctx.credential.accountId, id, fields) };
    }),
});
