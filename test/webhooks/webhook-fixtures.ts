// What the delivery tests share: subscriptions written as rows (the way the
// subscriptions API stores them), events raised through the API, and bounded
// waits on the delivery tables.
import { createHmac } from 'node:crypto';
import { expect } from 'vitest';
import { newId } from '../../server/db/ids.ts';
import type { TestService } from '../helpers/service.ts';

export const WEBHOOK_ENV = { WEBHOOK_ALLOW_HOSTS: 'localhost,127.0.0.1', WEBHOOK_RETRY_SCHEDULE: '1s,2s' };

export type SubscriptionOptions = {
  url: string;
  events: string[];
  tags?: string[];
  retries?: boolean;
  enabled?: boolean;
  applyToSubAccounts?: boolean;
  /** A signing secret to seal into the row; none = signing off. */
  secret?: string;
};

/** Inserts a subscription row; returns its row id (`wh_…`). */
export async function subscribe(service: TestService, accountId: string, options: SubscriptionOptions): Promise<string> {
  const id = newId('wh');
  await service.services.pool.query(
    `insert into webhook_subscriptions (id, account_id, name, url, subscribed_to, subscribed_to_tags, retries_enabled, enabled, apply_to_sub_accounts, signing_secret_sealed, signing_secret_created_at)
     values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, case when $10::text is null then null else now() end)`,
    [
      id,
      accountId,
      `hook ${id}`,
      options.url,
      options.events,
      options.tags ?? [],
      options.retries ?? false,
      options.enabled ?? true,
      options.applyToSubAccounts ?? false,
      options.secret === undefined ? null : service.services.secrets.seal(options.secret),
    ],
  );
  return id;
}

let phoneCounter = 0;

/** POST /contacts (emits Contact Created in the selected account); returns the event's contact id. */
export async function createContact(service: TestService, apiKey: string, userId?: string): Promise<string> {
  phoneCounter += 1;
  // Each test file has its own database, so numbers only need to differ within a file.
  const phone = `+1415555${String(2000 + phoneCounter).padStart(4, '0')}`;
  const created = await service.request('POST', '/contacts', { apiKey, query: { userId }, body: { phoneNumber: phone } });
  expect(created.status).toBe(200);
  return created.body.data.contactId;
}

/** POST /tasks (emits Task Created). */
export async function createTask(service: TestService, apiKey: string, userId?: string): Promise<string> {
  const created = await service.request('POST', '/tasks', { apiKey, query: { userId }, body: { title: 'Call back' } });
  expect(created.status).toBe(201);
  return created.body.data.id;
}

export type DeliveryRow = { id: string; event_id: string; subscription_id: string; account_id: string; status: string; attempts: number };

/**
 * A subscription's deliveries, oldest first: the delivery rows (pending, failed, dropped, and
 * those that succeeded on a retry or replay), and each delivery whose first attempt
 * succeeded, which is recorded by that attempt alone.
 */
export async function deliveriesOf(service: TestService, subscriptionId: string): Promise<DeliveryRow[]> {
  const result = await service.services.pool.query<DeliveryRow>(
    `select id, event_id, subscription_id, account_id, status, attempts from (
       select id, event_id, subscription_id, account_id, status, attempts, created_at from webhook_deliveries where subscription_id = $1
       union all
       select a.delivery_id, a.event_id, a.subscription_id, a.account_id, 'succeeded', a.attempt, a.created_at from webhook_attempts a
       where a.subscription_id = $1
         and not exists (select from webhook_deliveries d where d.id = a.delivery_id and d.account_id = a.account_id)
     ) logical
     order by created_at, id`,
    [subscriptionId],
  );
  return result.rows;
}

export type HealthRow = {
  account_id: string;
  consecutive_failures: number;
  total_failures: number;
  total_successes: number;
  is_disabled: boolean;
  disabled_at: string | null;
  disabled_reason: string | null;
  last_failure: Record<string, unknown> | null;
  last_success_at: string | null;
};

export async function healthOf(service: TestService, subscriptionId: string, accountId: string): Promise<HealthRow | null> {
  const result = await service.services.pool.query<HealthRow>(
    `select account_id, consecutive_failures, total_failures, total_successes, is_disabled, disabled_at, disabled_reason, last_failure, last_success_at
     from webhook_health where subscription_id = $1 and account_id = $2`,
    [subscriptionId, accountId],
  );
  return result.rows[0] ?? null;
}

/** Polls `read` until `holds` accepts its value; fails with the last value after `timeoutMs`. */
export async function eventually<T>(read: () => Promise<T>, holds: (value: T) => boolean, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (holds(value)) return value;
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms; last value: ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** The event id the outbox gave the last event of `name` in the account. */
export async function lastEventId(service: TestService, accountId: string, name: string): Promise<string> {
  const result = await service.services.pool.query<{ id: string }>(
    `select id from events where account_id = $1 and name = $2 order by created_at desc, id desc limit 1`,
    [accountId, name],
  );
  return result.rows[0].id;
}

/** The spec's signature: `v1=` + hex HMAC-SHA256 of `<timestamp>.<raw body>`, computed here independently. */
export function expectedSignature(secret: string, timestamp: string, body: string): string {
  return `v1=${createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex')}`;
}
