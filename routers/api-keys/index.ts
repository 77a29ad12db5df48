// API keys: the main key (inspect, rotate, revoke, usage) and scoped keys
// (create, list, update, revoke). Managing keys needs the main key or an owner
// session: the `API Keys` section can never be granted to a scoped key.
// The static `/api-keys/current` and `/api-keys/usage` come before `/api-keys/{id}`,
// because the first matching operation in router order wins. No procedure here takes
// `userId`: an agency manages its own keys, never its clients'.
import { z } from 'zod';
import { getMainKey, revokeMainKey, rotateMainKey } from '../../server/api-keys/main-key.ts';
import { createScopedKey, ScopedKeyCreateInput } from '../../server/api-keys/create-scoped-key.ts';
import { listScopedKeys } from '../../server/api-keys/list-scoped-keys.ts';
import { revokeScopedKey } from '../../server/api-keys/revoke-scoped-key.ts';
import { ScopedKeyRecord } from '../../server/api-keys/scoped-key-record.ts';
import { ScopedKeyUpdateInput, updateScopedKey } from '../../server/api-keys/update-scoped-key.ts';
import { describeUsage } from '../../server/rate-limit/usage.ts';
import { accountProcedure, router } from '../../server/trpc.ts';
import { AT_LEAST_ONE_FIELD } from '../../server/http/openapi.ts';

const NoInput = z.object({});
const KeyId = z.object({ id: z.string().min(1) });

/** Every key-management procedure acts on the caller's own account only: `userId` is refused (403). */
const keyManagement = { section: 'API Keys', ownAccountOnly: true } as const;
const owner = { ...keyManagement, requires: 'owner' } as const;

export const apiKeysRouter = router({
  current: accountProcedure
    .meta({
      openapi: { method: 'GET', path: '/api-keys/current', tags: ['API Keys'], summary: "The account's main API key" },
      ...owner,
      access: 'read',
      errorShapes: { '404': 'successError' },
    })
    .input(NoInput)
    .output(z.object({ success: z.literal(true), api_key: z.string().nullable(), api_key_masked: z.string(), created_at: z.string() }))
    .query(async ({ ctx }) => ({ success: true as const, ...(await getMainKey(ctx.em, ctx.services.secrets, ctx.account.id)) })),

  usage: accountProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/api-keys/usage',
        tags: ['API Keys'],
        summary: "The calling key's rate-limit budget in the current window (this request is counted apart, at the key's per-minute limit, and spends none of it)",
      },
      ...keyManagement,
      access: 'read',
      rateLimit: 'apart',
    })
    .input(NoInput)
    .output(
      z.object({
        success: z.literal(true),
        usage: z.object({
          limit: z.number().int(),
          window_seconds: z.number().int(),
          used: z.number().int(),
          remaining: z.number().int(),
          window_resets_at: z.string(),
        }),
        note: z.string().optional(),
      }),
    )
    .query(({ ctx }) => ({ success: true as const, ...describeUsage(ctx.rateLimit) })),

  rotate: accountProcedure
    .meta({
      openapi: { method: 'POST', path: '/api-keys/rotate', tags: ['API Keys'], summary: 'Replace the main key; the previous key stops working at once' },
      ...owner,
      access: 'write',
    })
    .input(NoInput)
    .output(z.object({ success: z.literal(true), api_key: z.string(), message: z.string() }))
    .mutation(async ({ ctx }) => ({
      success: true as const,
      api_key: await rotateMainKey(ctx.em, ctx.services.secrets, ctx.account.id),
      message: 'API key rotated. The previous key no longer works.',
    })),

  revokeCurrent: accountProcedure
    .meta({
      openapi: { method: 'DELETE', path: '/api-keys/current', tags: ['API Keys'], summary: 'Revoke the main key (no replacement, no undo)' },
      ...owner,
      access: 'write',
      errorShapes: { '404': 'envelope' },
    })
    .input(NoInput)
    .output(z.object({ success: z.literal(true), revoked: z.literal(true), message: z.string() }))
    .mutation(async ({ ctx }) => {
      await revokeMainKey(ctx.em, ctx.account.id);
      return { success: true as const, revoked: true as const, message: 'API key revoked. There is no replacement key and this cannot be undone.' };
    }),

  list: accountProcedure
    .meta({
      openapi: { method: 'GET', path: '/api-keys', tags: ['API Keys'], summary: 'Scoped keys, newest first (at most 200, revoked included)' },
      ...owner,
      access: 'read',
    })
    .input(NoInput)
    .output(z.object({ success: z.literal(true), api_keys: z.array(ScopedKeyRecord) }))
    .query(async ({ ctx }) => ({ success: true as const, api_keys: await listScopedKeys(ctx.em, ctx.account.id) })),

  create: accountProcedure
    .meta({
      openapi: { method: 'POST', path: '/api-keys', tags: ['API Keys'], summary: 'Create a scoped key (the value is returned once)' },
      ...owner,
      access: 'write',
      successStatus: 201,
    })
    .input(ScopedKeyCreateInput)
    .output(
      z.object({
        success: z.literal(true),
        api_key: z.string(),
        key: ScopedKeyRecord.pick({ id: true, label: true, key_preview: true, scopes: true, expires_at: true, revoked: true }),
        message: z.string(),
      }),
    )
    .mutation(async ({ ctx, input }) => {
      const created = await createScopedKey(ctx.em, ctx.services.secrets, ctx.account.id, input);
      const { id, label, key_preview, scopes, expires_at, revoked } = created.key;
      return {
        success: true as const,
        api_key: created.apiKey,
        key: { id, label, key_preview, scopes, expires_at, revoked },
        message: 'API key created. Store it now: it is not shown again.',
      };
    }),

  update: accountProcedure
    .meta({
      openapi: { method: 'PATCH', path: '/api-keys/{id}', tags: ['API Keys'], summary: "Change a scoped key's label, scopes (replaced whole) or expiry" },
      ...owner,
      access: 'write',
      errorShapes: { '404': 'envelope', '409': 'envelope' },
      bodyConstraints: AT_LEAST_ONE_FIELD,
    })
    .input(ScopedKeyUpdateInput.extend(KeyId.shape))
    .output(z.object({ success: z.literal(true), key: ScopedKeyRecord }))
    .mutation(async ({ ctx, input }) => {
      const { id, ...fields } = input;
      return { success: true as const, key: await updateScopedKey(ctx.em, ctx.account.id, id, fields) };
    }),

  revoke: accountProcedure
    .meta({
      openapi: { method: 'DELETE', path: '/api-keys/{id}', tags: ['API Keys'], summary: 'Revoke a scoped key (idempotent)' },
      ...owner,
      access: 'write',
      errorShapes: { '404': 'envelope' },
    })
    .input(KeyId)
    .output(z.object({ success: z.literal(true), revoked: z.literal(true), id: z.string(), message: z.string() }))
    .mutation(async ({ ctx, input }) => {
      await revokeScopedKey(ctx.em, ctx.account.id, input.id);
      return { success: true as const, revoked: true as const, id: input.id, message: 'API key revoked.' };
    }),
});
