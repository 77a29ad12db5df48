// Webhook subscriptions: list, events, create, update, delete, test, health, re-enable,
// signing secret, delivery log and replay. Every route needs webhooks enabled for the
// account (403 otherwise). `{webhookId}` is the positional id or the URL-encoded name.
// The static `/webhooks/events` comes before `/webhooks/{webhookId}`, because the first
// matching operation in router order wins.
import { z } from 'zod';
import { EVENT_NAMES } from '../../server/events/event-names.ts';
import { assertEveryClientInScope } from '../../server/auth/scopes.ts';
import { AT_LEAST_ONE_FIELD } from '../../server/http/openapi.ts';
import { PageInput } from '../../server/pagination.ts';
import { accountProcedure, router } from '../../server/trpc.ts';
import { assertWebhooksEnabled } from '../../server/webhooks/assert-webhooks-enabled.ts';
import { createSubscription, WebhookCreateInput } from '../../server/webhooks/create-subscription.ts';
import { deleteSubscription } from '../../server/webhooks/delete-subscription.ts';
import { DeliveryAttemptRecord, listDeliveryAttempts } from '../../server/webhooks/list-delivery-attempts.ts';
import { listSubscriptions } from '../../server/webhooks/list-subscriptions.ts';
import { replayDeliveries, WebhookReplayInput } from '../../server/webhooks/replay-deliveries.ts';
import { disableSigning, getSigningSecret, rotateSigningSecret } from '../../server/webhooks/signing-secret.ts';
import { getSubscriptionHealth, HealthRecord, reenableSubscription } from '../../server/webhooks/subscription-health.ts';
import { WebhookRecord, WebhookSummary } from '../../server/webhooks/subscription-record.ts';
import { testSubscription, WebhookTestInput } from '../../server/webhooks/test-subscription.ts';
import { updateSubscription, WebhookUpdateInput } from '../../server/webhooks/update-subscription.ts';

/** Authorization shared by every /webhooks route: the account must have webhooks on. */
const webhooksProcedure = accountProcedure.use(async ({ ctx, next }) => {
  await assertWebhooksEnabled(ctx.em, ctx.account.id);
  return next();
});

const NoInput = z.object({});
const WebhookPath = z.object({ webhookId: z.string().min(1) });
const notFound = { '404': 'envelope' } as const;
const tags = ['Webhooks'];

const SigningSecretOutput = z.object({
  success: z.literal(true),
  webhook_id: z.string(),
  signing_enabled: z.boolean(),
  signing_secret: z.string().nullable(),
  signing_secret_created_at: z.string().nullable(),
});

// Spec rule 3: all three signing-secret routes, GET included, need the Integrations edit permission.
const integrationsEdit = { section: 'Integrations', access: 'write' } as const;

// A subscription that applies to sub-accounts receives every client's events: switching that
// on needs a key that may act on every client (sub_account_ids ["*"]).
const inheritance = { everyClientWhenSet: 'apply_to_sub_accounts' } as const;

export const webhooksRouter = router({
  list: webhooksProcedure
    .meta({
      openapi: { method: 'GET', path: '/webhooks', tags, summary: "The account's webhook subscriptions, switched-off ones included" },
      section: 'Webhooks',
      access: 'read',
    })
    .input(NoInput)
    .output(z.object({ success: z.literal(true), webhooks: z.array(WebhookRecord) }))
    .query(async ({ ctx }) => ({ success: true as const, webhooks: await listSubscriptions(ctx.em, ctx.account.id) })),

  events: webhooksProcedure
    .meta({
      openapi: { method: 'GET', path: '/webhooks/events', tags, summary: 'The subscribable event names' },
      section: 'Webhooks',
      access: 'read',
    })
    .input(NoInput)
    .output(z.object({ success: z.literal(true), events: z.array(z.string()) }))
    .query(() => ({ success: true as const, events: [...EVENT_NAMES] })),

  create: webhooksProcedure
    .meta({
      openapi: { method: 'POST', path: '/webhooks', tags, summary: 'Create a webhook subscription (optionally with a signing secret, returned once here)' },
      section: 'Webhooks',
      access: 'write',
      errorShapes: { '409': 'envelope' },
      targetAccount: inheritance,
      // Minting the secret here hands it out as GET /webhooks/{id}/signing-secret would (rule 3).
      sectionWhenSet: { field: 'generate_signing_secret', ...integrationsEdit },
    })
    .input(WebhookCreateInput)
    .output(
      z.object({
        success: z.literal(true),
        webhook_id: z.string(),
        webhook: WebhookSummary,
        signing_secret: z.string().optional(),
      }),
    )
    .mutation(async ({ ctx, input }) => ({
      success: true as const,
      ...(await createSubscription(
        ctx.em,
        ctx.services.secrets,
        { accountId: ctx.account.id, allowHosts: ctx.services.config.WEBHOOK_ALLOW_HOSTS ?? [] },
        input,
      )),
    })),

  update: webhooksProcedure
    .meta({
      openapi: { method: 'PUT', path: '/webhooks/{webhookId}', tags, summary: 'Change a subscription; omitted fields keep their values, arrays are replaced' },
      section: 'Webhooks',
      access: 'write',
      errorShapes: { '404': 'envelope', '409': 'envelope' },
      bodyConstraints: AT_LEAST_ONE_FIELD,
      targetAccount: inheritance,
    })
    .input(WebhookUpdateInput.extend(WebhookPath.shape))
    .output(z.object({ success: z.literal(true), webhook_id: z.string(), webhook: WebhookRecord }))
    .mutation(async ({ ctx, input }) => {
      const { webhookId, ...fields } = input;
      const options = {
        accountId: ctx.account.id,
        allowHosts: ctx.services.config.WEBHOOK_ALLOW_HOSTS ?? [],
        // A new URL or event list on a subscription that inherits is decided on the stored row.
        assertMayActOnEveryClient: () => assertEveryClientInScope(ctx.credential),
      };
      return { success: true as const, ...(await updateSubscription(ctx.em, options, webhookId, fields)) };
    }),

  delete: webhooksProcedure
    .meta({
      openapi: { method: 'DELETE', path: '/webhooks/{webhookId}', tags, summary: 'Delete a subscription; later ones move up one position' },
      section: 'Webhooks',
      access: 'write',
      errorShapes: notFound,
    })
    .input(WebhookPath)
    .output(z.object({ success: z.literal(true) }))
    .mutation(async ({ ctx, input }) => {
      await deleteSubscription(ctx.em, ctx.account.id, input.webhookId);
      return { success: true as const };
    }),

  test: webhooksProcedure
    .meta({
      openapi: { method: 'POST', path: '/webhooks/{webhookId}/test', tags, summary: 'Send a sample event now and report how it went (health is not changed)' },
      section: 'Webhooks',
      access: 'write',
      errorShapes: notFound,
    })
    .input(WebhookTestInput.extend(WebhookPath.shape))
    .output(
      z.union([
        z.object({ success: z.literal(true), webhook_id: z.string(), delivered: z.literal(true) }),
        z.object({
          success: z.literal(true),
          webhook_id: z.string(),
          delivered: z.literal(false),
          failure_type: z.enum(['permanent', 'temporary', 'timeout', 'network', 'unknown']),
          status_code: z.number().int().nullable(),
          error_message: z.string(),
        }),
      ]),
    )
    .mutation(async ({ ctx, input }) => {
      const { webhookId, ...fields } = input;
      const options = {
        accountId: ctx.account.id,
        allowHosts: ctx.services.config.WEBHOOK_ALLOW_HOSTS ?? [],
        timeoutMs: ctx.services.config.WEBHOOK_TIMEOUT_MS,
      };
      return { success: true as const, ...(await testSubscription(ctx.em, ctx.services.secrets, options, webhookId, fields)) };
    }),

  health: webhooksProcedure
    .meta({
      openapi: { method: 'GET', path: '/webhooks/{webhookId}/health', tags, summary: "The URL's delivery health (null before any delivery)" },
      section: 'Webhooks',
      access: 'read',
      errorShapes: notFound,
    })
    .input(WebhookPath)
    .output(z.object({ success: z.literal(true), webhook_id: z.string(), url: z.string(), health: HealthRecord.nullable() }))
    .query(async ({ ctx, input }) => ({ success: true as const, ...(await getSubscriptionHealth(ctx.em, ctx.account.id, input.webhookId)) })),

  reenable: webhooksProcedure
    .meta({
      openapi: { method: 'POST', path: '/webhooks/{webhookId}/reenable', tags, summary: 'Resume an auto-disabled URL and reset its failure counters (delivers nothing)' },
      section: 'Webhooks',
      access: 'write',
      errorShapes: notFound,
    })
    .input(WebhookPath)
    .output(z.object({ success: z.literal(true), webhook_id: z.string() }))
    .mutation(async ({ ctx, input }) => ({ success: true as const, ...(await reenableSubscription(ctx.em, ctx.account.id, input.webhookId)) })),

  signingSecret: webhooksProcedure
    .meta({
      openapi: { method: 'GET', path: '/webhooks/{webhookId}/signing-secret', tags, summary: 'The signing secret (null with signing off)' },
      ...integrationsEdit,
      errorShapes: notFound,
    })
    .input(WebhookPath)
    .output(SigningSecretOutput)
    .query(async ({ ctx, input }) => ({
      success: true as const,
      ...(await getSigningSecret(ctx.em, ctx.services.secrets, ctx.account.id, input.webhookId)),
    })),

  rotateSigningSecret: webhooksProcedure
    .meta({
      openapi: { method: 'POST', path: '/webhooks/{webhookId}/signing-secret', tags, summary: 'Turn signing on, or replace the secret' },
      ...integrationsEdit,
      errorShapes: notFound,
    })
    .input(WebhookPath)
    .output(SigningSecretOutput)
    .mutation(async ({ ctx, input }) => ({
      success: true as const,
      ...(await rotateSigningSecret(ctx.em, ctx.services.secrets, ctx.account.id, input.webhookId)),
    })),

  disableSigning: webhooksProcedure
    .meta({
      openapi: { method: 'DELETE', path: '/webhooks/{webhookId}/signing-secret', tags, summary: 'Turn signing off' },
      ...integrationsEdit,
      errorShapes: notFound,
    })
    .input(WebhookPath)
    .output(z.object({ success: z.literal(true), webhook_id: z.string(), signing_enabled: z.literal(false) }))
    .mutation(async ({ ctx, input }) => ({ success: true as const, ...(await disableSigning(ctx.em, ctx.account.id, input.webhookId)) })),

  deliveries: webhooksProcedure
    .meta({
      openapi: { method: 'GET', path: '/webhooks/{webhookId}/deliveries', tags, summary: 'The delivery log, one entry per attempt, newest first' },
      ...integrationsEdit,
      errorShapes: notFound,
    })
    .input(PageInput.extend(WebhookPath.shape))
    .output(
      z.object({
        success: z.literal(true),
        deliveries: z.array(DeliveryAttemptRecord),
        next_cursor: z.string().nullable(),
      }),
    )
    .query(async ({ ctx, input }) => {
      const { webhookId, ...page } = input;
      return { success: true as const, ...(await listDeliveryAttempts(ctx.em, ctx.services.secrets, ctx.account.id, webhookId, page)) };
    }),

  replay: webhooksProcedure
    .meta({
      openapi: { method: 'POST', path: '/webhooks/{webhookId}/replay', tags, summary: 'Re-send the failed deliveries since a moment, with their original delivery ids' },
      ...integrationsEdit,
      errorShapes: notFound,
      queryFields: ['since'],
    })
    .input(WebhookReplayInput.extend(WebhookPath.shape))
    .output(z.object({ success: z.literal(true), webhook_id: z.string(), replayed: z.number().int() }))
    .mutation(async ({ ctx, input }) => {
      const { webhookId, ...fields } = input;
      return { success: true as const, ...(await replayDeliveries(ctx.em, ctx.services.pool, ctx.account.id, webhookId, fields)) };
    }),
});
