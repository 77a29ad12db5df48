// Sub-accounts: an agency's client accounts (agency-only, so `userId` is refused).
// PUT /sub-accounts/{id}/usage-limits lives with the credits router.
import { z } from 'zod';
import { PageInput } from '../../server/pagination.ts';
import { createSubAccount, SubAccountCreateInput } from '../../server/sub-accounts/create-sub-account.ts';
import { deleteSubAccount } from '../../server/sub-accounts/delete-sub-account.ts';
import { getSubAccount } from '../../server/sub-accounts/find-sub-account.ts';
import { listSubAccounts } from '../../server/sub-accounts/list-sub-accounts.ts';
import { SubAccountRecord } from '../../server/sub-accounts/sub-account-record.ts';
import { SubAccountUpdateInput, updateSubAccount } from '../../server/sub-accounts/update-sub-account.ts';
import { accountProcedure, router } from '../../server/trpc.ts';
import { SuccessOnly } from '../shared-schemas.ts';
import { atLeastOneField } from '../../server/http/openapi.ts';

const SubAccountId = z.object({ id: z.string() });
const SubAccountData = z.object({ success: z.literal(true), data: SubAccountRecord });
const meta = { section: 'Sub Accounts', agencyOnly: true } as const;
// The client named in the path is held to a scoped key's sub_account_ids like `userId`;
// creating or listing clients needs `["*"]` (server/auth/scopes.ts says why).
const oneClient = { ...meta, targetAccount: { inputField: 'id' } } as const;
const everyClient = { ...meta, targetAccount: 'everyClient' } as const;

export const subAccountsRouter = router({
  create: accountProcedure
    .meta({ openapi: { method: 'POST', path: '/sub-accounts', tags: ['Sub Accounts'], summary: 'Create a client sub-account (agencies only)' }, ...everyClient, access: 'write', successStatus: 201, errorShapes: { '409': 'envelope' } })
    .input(SubAccountCreateInput)
    .output(SubAccountData)
    .mutation(async ({ ctx, input }) => ({ success: true as const, data: await createSubAccount(ctx.em, ctx.account.id, input) })),

  list: accountProcedure
    .meta({ openapi: { method: 'GET', path: '/sub-accounts', tags: ['Sub Accounts'], summary: "Page through the agency's client sub-accounts" }, ...everyClient, access: 'read' })
    .input(PageInput)
    .output(z.object({ success: z.literal(true), sub_accounts: z.array(SubAccountRecord), next_cursor: z.string().nullable() }))
    .query(async ({ ctx, input }) => ({ success: true as const, ...(await listSubAccounts(ctx.em, ctx.services.secrets, ctx.account.id, input)) })),

  get: accountProcedure
    .meta({ openapi: { method: 'GET', path: '/sub-accounts/{id}', tags: ['Sub Accounts'], summary: 'Get a client sub-account' }, ...oneClient, access: 'read', errorShapes: { '404': 'envelope' } })
    .input(SubAccountId)
    .output(SubAccountData)
    .query(async ({ ctx, input }) => ({ success: true as const, data: await getSubAccount(ctx.em, ctx.account.id, input.id) })),

  update: accountProcedure
    .meta({ openapi: { method: 'PUT', path: '/sub-accounts/{id}', tags: ['Sub Accounts'], summary: 'Change a client sub-account' }, ...oneClient, access: 'write', bodyConstraints: atLeastOneField('usage_limits'), errorShapes: { '404': 'envelope', '409': 'envelope' } })
    .input(SubAccountUpdateInput.extend(SubAccountId.shape))
    .output(SubAccountData)
    .mutation(async ({ ctx, input }) => {
      const { id, ...fields } = input;
      return { success: true as const, data: await updateSubAccount(ctx.em, ctx.account.id, id, fields) };
    }),

  delete: accountProcedure
    .meta({ openapi: { method: 'DELETE', path: '/sub-accounts/{id}', tags: ['Sub Accounts'], summary: 'Delete a client sub-account and everything in it' }, ...oneClient, access: 'write', errorShapes: { '404': 'envelope' } })
    .input(SubAccountId)
    .output(SuccessOnly)
    .mutation(async ({ ctx, input }) => {
      await deleteSubAccount(ctx.em, ctx.account.id, input.id);
      return { success: true as const };
    }),
});
