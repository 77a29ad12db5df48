import { defineEntity, p } from '@mikro-orm/core';
import { Account } from './account.ts';

// A webhook subscription. Its public `id` is positional (1-based, by created_at then
// id, within the account) as the spec says; the row id (`wh_…`) is the stable internal
// id that deliveries and health refer to, never shown as the subscription's `id`.
export const WebhookSubscriptionSchema = defineEntity({
  name: 'WebhookSubscription',
  tableName: 'webhook_subscriptions',
  properties: {
    id: p.text().primary(),
    account: () => p.manyToOne(Account).ref().deleteRule('cascade').index(false),
    name: p.text(),
    url: p.text(),
    subscribedTo: p.array<string>(),
    subscribedToTags: p.array<string>(),
    retriesEnabled: p.boolean().default(false),
    enabled: p.boolean().default(true),
    applyToSubAccounts: p.boolean().default(false),
    // The signing secret, sealed with the service's at-rest key (secrets.ts); null = signing off.
    signingSecretSealed: p.text().nullable(),
    signingSecretCreatedAt: p.datetime().nullable(),
    createdAt: p.datetime().defaultRaw('now()'),
    updatedAt: p.datetime().defaultRaw('now()').onUpdate(() => new Date()),
  },
  uniques: [{ properties: ['account', 'name'], name: 'webhook_subscriptions_account_id_name_unique' }],
  indexes: [
    { properties: ['account', 'createdAt'], name: 'webhook_subscriptions_account_id_created_at_index' },
    { properties: ['applyToSubAccounts'], name: 'webhook_subscriptions_inherited_index', where: 'apply_to_sub_accounts' },
  ],
});

export class WebhookSubscription extends WebhookSubscriptionSchema.class {}
WebhookSubscriptionSchema.setClass(WebhookSubscription);
