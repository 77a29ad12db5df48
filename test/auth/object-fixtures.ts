// What the object-level authorization test needs: one object of each kind with an id,
// made through the API (or, where the API has no way to make one, written as the
// service's own code writes it), and a snapshot of everything an account owns in the
// database, to show that another account's calls changed nothing.
import { expect } from 'vitest';
import { createScopedKey } from '../../server/api-keys/create-scoped-key.ts';
import { recordMessage } from '../../server/messages/record-message.ts';
import type { FakeMessagingProvider } from '../helpers/fake-messaging-provider.ts';
import type { TestService } from '../helpers/service.ts';
import { addTemplate, connectAccount, eventually } from '../messaging/send-template-fixtures.ts';

/** The kinds of object an id in a procedure's input can name. */
export type Resource =
  | 'contact'
  | 'list'
  | 'tag'
  | 'task'
  | 'chatWidget'
  | 'webhook'
  | 'scopedKey'
  | 'subAccount'
  | 'template'
  | 'broadcast'
  | 'appointment';

/** Why an object could not be made (a route not served yet): the cases that need it say so. */
export type Missing = { missing: string };

export type Owned = {
  accountId: string;
  contact: { id: string; phoneNumber: string; email: string };
  list: { id: string };
  tag: { name: string };
  task: { id: string };
  appointment: { id: string };
  template: { id: string };
  scopedKey: { id: string };
  chatWidget: { id: string } | Missing;
  webhook?: { name: string; position: string; rowId: string; deliveryIds: string[] };
  broadcast?: { id: string };
  chatSessionIds: string[];
  summaryIds: string[];
};

let counter = 0;
function unique(label: string): string {
  counter += 1;
  return `${label}-${counter}-${process.pid}`;
}

export function nextPhone(): string {
  counter += 1;
  return `+1415557${String(counter).padStart(4, '0')}`;
}

type As = { apiKey: string; userId?: string };

async function post(service: TestService, as: As, path: string, body: unknown, status: number) {
  const response = await service.request('POST', path, { apiKey: as.apiKey, query: { userId: as.userId }, body });
  expect(response.status, `${path}: ${response.text}`).toBe(status);
  return response.body;
}

/**
 * The objects a caller needs of its own so that only the one foreign id in a call is
 * foreign (a contact to put on another account's list, a task to point at another
 * account's contact, ...).
 */
export async function createOwnObjects(service: TestService, accountId: string, as: As): Promise<Omit<Owned, 'chatSessionIds' | 'summaryIds'>> {
  const label = unique('own');
  const phoneNumber = nextPhone();
  const email = `${label}@example.com`;
  const contactId = (await post(service, as, '/v1/contacts', { phoneNumber, email }, 200)).data.contactId;
  const listId = (await post(service, as, '/v1/lists', { name: label }, 201)).data.id;
  const tagName = `tag-${label}`;
  await post(service, as, '/v1/tags', { tag: tagName, phoneNumber }, 201);
  const taskId = (await post(service, as, '/v1/tasks', { title: label, contactId }, 201)).data.id;
  const appointmentId = (await post(service, as, `/v1/contacts/${contactId}/appointments`, { starts_at: '2030-01-01T09:00:00Z', title: label }, 201)).data.id;
  const templateId = await addTemplate(service, accountId, { name: `tpl_${label.replaceAll('-', '_')}`, body: 'Hello {{first_name|there}}' });
  const key = await createScopedKey(service.services.orm.em.fork(), service.services.secrets, accountId, {
    label,
    scopes: { tags: ['Contacts'], read_only: true },
  });
  return {
    accountId,
    contact: { id: contactId, phoneNumber, email },
    list: { id: listId },
    tag: { name: tagName },
    task: { id: taskId },
    appointment: { id: appointmentId },
    template: { id: templateId },
    scopedKey: { id: key.key.id },
    chatWidget: await createWidget(service, as, label),
  };
}

async function createWidget(service: TestService, as: As, label: string): Promise<{ id: string } | Missing> {
  const response = await service.request('POST', '/v1/chat-widgets', { apiKey: as.apiKey, query: { userId: as.userId }, body: { name: label }, unchecked: true });
  if (response.status === 404 && !response.text.includes('"success"')) {
    return { missing: `POST /v1/chat-widgets is not served (404 ${response.text.slice(0, 120)}), so no chat widget of account A could be made` };
  }
  expect(response.status, `POST /v1/chat-widgets: ${response.text}`).toBe(201);
  return { id: response.body.data.id };
}

/**
 * Everything of one kind the account owns, with history behind it: its contact has
 * messages (so a chat session), a summary, a tag, a list and a task; a webhook that has
 * delivered; a broadcast that has run.
 */
export async function createOwnedObjects(
  service: TestService,
  accountId: string,
  as: As,
  options: { webhookUrl: string; phoneNumberId: string; fake: FakeMessagingProvider },
): Promise<Owned> {
  const own = await createOwnObjects(service, accountId, as);
  await post(service, as, '/v1/contacts/lists', { contactId: own.contact.id, listId: own.list.id }, 200);
  const em = service.services.orm.em.fork();
  await recordMessage(em, accountId, { contactId: own.contact.id, direction: 'inbound', body: 'Hello, I would like to book a table for two' });
  await recordMessage(em, accountId, { contactId: own.contact.id, direction: 'outbound', body: 'Of course, for which evening?' });
  await post(service, as, '/v1/summaries', { phoneNumber: own.contact.phoneNumber }, 200);

  // Two subscriptions, so that position 2 exists in this account only.
  await post(service, as, '/v1/webhooks', { url: options.webhookUrl, subscribed_to: ['Task Created'], name: unique('first-hook') }, 200);
  const hookName = unique('hook');
  const hook = await post(service, as, '/v1/webhooks', { url: options.webhookUrl, subscribed_to: ['Contact Created'], name: hookName, generate_signing_secret: true }, 200);
  await post(service, as, '/v1/contacts', { phoneNumber: nextPhone() }, 200);

  await connectAccount(service, options.fake, accountId, { phoneNumberId: options.phoneNumberId, token: unique('token') });
  const broadcast = await post(service, as, '/v1/broadcasts', { listId: own.list.id, whatsappTemplateId: own.template.id }, 201);

  const settled = await eventually(
    async () => {
      const { rows } = await service.services.pool.query(
        `select
           (select json_agg(id) from chat_sessions where account_id = $1) as sessions,
           (select json_agg(id) from summaries where account_id = $1) as summaries,
           (select json_agg(a.delivery_id) from webhook_attempts a join webhook_subscriptions s on s.id = a.subscription_id
             where s.account_id = $1 and s.name = $2 and a.status_code between 200 and 299) as deliveries,
           (select status from broadcasts where id = $3) as broadcast,
           (select count(*)::int from events where account_id = $1 and dispatched_at is null) as undispatched,
           (select json_agg(json_build_object('status', status, 'error', last_error)) from webhook_deliveries where account_id = $1 and status <> 'succeeded') as pending`,
        [accountId, hookName, broadcast.data.id],
      );
      return rows[0] as { sessions: string[] | null; summaries: string[] | null; deliveries: string[] | null; broadcast: string; undispatched: number; pending: unknown[] | null };
    },
    (row) => !!row.sessions && !!row.summaries && !!row.deliveries && row.broadcast === 'completed' && row.undispatched === 0 && !row.pending,
    45_000,
  );
  const rowId = (await service.services.pool.query('select id from webhook_subscriptions where account_id = $1 and name = $2', [accountId, hookName])).rows[0].id;
  return {
    ...own,
    webhook: { name: hookName, position: String(hook.webhook_id), rowId, deliveryIds: settled.deliveries! },
    broadcast: { id: broadcast.data.id },
    chatSessionIds: settled.sessions!,
    summaryIds: settled.summaries!,
  };
}

/** Every string that identifies one of the account's objects (a listing of another account must show none). */
export function identifiersOf(owned: Owned): string[] {
  const widget = 'id' in owned.chatWidget ? [owned.chatWidget.id] : [];
  return [
    owned.accountId,
    owned.contact.id,
    owned.contact.phoneNumber,
    owned.contact.email,
    owned.list.id,
    owned.tag.name,
    owned.task.id,
    owned.appointment.id,
    owned.template.id,
    owned.scopedKey.id,
    ...widget,
    ...(owned.webhook ? [owned.webhook.name, owned.webhook.rowId, ...owned.webhook.deliveryIds] : []),
    ...(owned.broadcast ? [owned.broadcast.id] : []),
    ...owned.chatSessionIds,
    ...owned.summaryIds,
  ];
}

/**
 * Every row the accounts own, in every table with an `account_id` (their account rows,
 * and the rows hanging off their deliveries and broadcasts), as one JSON text. Left out:
 * when a key was last used (reading as A to check uses A's key).
 */
export async function snapshotOf(service: TestService, accountIds: string[]): Promise<Record<string, unknown>> {
  const { rows: tables } = await service.services.pool.query<{ table_name: string }>(
    `select table_name from information_schema.columns
      where table_schema = 'public' and column_name = 'account_id' order by table_name`,
  );
  const parts = tables.map(({ table_name }) => {
    const row = table_name === 'api_keys' ? `(to_jsonb(t) - 'last_used_at')` : 'to_jsonb(t)';
    return `'${table_name}', (select coalesce(jsonb_agg(${row} order by ${row}::text), '[]') from "${table_name}" t where account_id = any($1))`;
  });
  parts.push(`'accounts', (select jsonb_agg(to_jsonb(t) order by id) from accounts t where id = any($1))`);
  parts.push(`'broadcast_recipients', (select coalesce(jsonb_agg(to_jsonb(t) order by t.contact_id), '[]') from broadcast_recipients t
                join broadcasts b on b.id = t.broadcast_id where b.account_id = any($1))`);
  const { rows } = await service.services.pool.query(`select jsonb_build_object(${parts.join(', ')}) as snapshot`, [accountIds]);
  return rows[0].snapshot;
}
