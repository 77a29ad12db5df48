// What the template-send and broadcast tests share: an account connected to the fake
// provider and its templates written as rows (as the connection and the template sync
// store them), contacts made through the API, and reads of the tables the sends change.
import { expect } from 'vitest';
import { newId } from '../../server/db/ids.ts';
import type { FakeMessagingProvider } from '../helpers/fake-messaging-provider.ts';
import type { TestService } from '../helpers/service.ts';

export const MESSAGING_ALLOW_HOSTS = { WEBHOOK_ALLOW_HOSTS: 'localhost,127.0.0.1' };

/**
 * Stores provider credentials the way PUT /messaging/connection does (token sealed), and
 * tells the fake provider the token reaches the number, as the real one would.
 */
export async function connectAccount(
  service: TestService,
  fake: FakeMessagingProvider,
  accountId: string,
  credentials: { phoneNumberId: string; token: string },
): Promise<void> {
  fake.grant(credentials.token, { phoneNumberId: credentials.phoneNumberId });
  await service.services.pool.query(
    `insert into messaging_connections (account_id, phone_number_id, business_account_id, access_token_sealed) values ($1, $2, null, $3)`,
    [accountId, credentials.phoneNumberId, service.services.secrets.seal(credentials.token)],
  );
}

/** A template row as the sync stores it; returns its id. */
export async function addTemplate(
  service: TestService,
  accountId: string,
  template: { name: string; body: string; status?: string; language?: string },
): Promise<string> {
  const id = newId('tpl');
  const components = [{ type: 'BODY', text: template.body }];
  await service.services.pool.query(
    `insert into message_templates (id, account_id, name, language, status, body, components, template)
     values ($1, $2, $3, $4, $5, $6, $7, $8)`,
    [
      id,
      accountId,
      template.name,
      template.language ?? 'en',
      template.status ?? 'APPROVED',
      template.body,
      JSON.stringify(components),
      JSON.stringify({ name: template.name, status: template.status ?? 'APPROVED', components }),
    ],
  );
  return id;
}

let phoneCounter = 0;

export function nextPhoneNumber(): string {
  phoneCounter += 1;
  return `+1415556${String(phoneCounter).padStart(4, '0')}`;
}

/** POST /contacts; returns the contact id. */
export async function createContact(service: TestService, apiKey: string, fields: Record<string, unknown> = {}): Promise<string> {
  const created = await service.request('POST', '/contacts', { apiKey, body: { phoneNumber: nextPhoneNumber(), ...fields } });
  expect(created.status, created.text).toBe(200);
  return created.body.data.contactId;
}

export async function creditsOf(service: TestService, accountId: string): Promise<number> {
  const { rows } = await service.services.pool.query<{ credits: number }>('select credits from accounts where id = $1', [accountId]);
  return Number(rows[0]!.credits);
}

/** The account's events of one kind, oldest first. */
export async function eventsOf(service: TestService, accountId: string, name: string): Promise<Array<Record<string, any>>> {
  const { rows } = await service.services.pool.query<{ payload: Record<string, any> }>(
    'select payload from events where account_id = $1 and name = $2 order by created_at, id',
    [accountId, name],
  );
  return rows.map((row) => row.payload);
}

export async function messagesOf(service: TestService, contactId: string): Promise<Array<Record<string, any>>> {
  const { rows } = await service.services.pool.query('select * from messages where contact_id = $1 order by created_at, id', [contactId]);
  return rows;
}

/** Polls `read` until `done` holds, for at most `timeoutMs`. */
export async function eventually<T>(read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms; last value: ${JSON.stringify(value)?.slice(0, 500)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/**
 * `count` contacts on the list, written as rows (as POST /contacts stores them) since the
 * API's rate limit would refuse hundreds of creates; contact i is do-not-disturb when `quiet(i)`.
 */
export async function insertListContacts(
  service: TestService,
  accountId: string,
  listId: string,
  count: number,
  quiet: (index: number) => boolean = () => false,
): Promise<string[]> {
  const contacts = Array.from({ length: count }, (_, index) => ({
    id: newId('ct'),
    phone: nextPhoneNumber(),
    first_name: `Person${index}`,
    dnd: quiet(index),
  }));
  await service.services.pool.query(
    `with rows as (select * from json_to_recordset($2::json) as r(id text, phone text, first_name text, dnd boolean)),
     inserted as (
       insert into contacts (id, account_id, phone_number, first_name, do_not_disturb)
       select id, $1, phone, first_name, dnd from rows returning id)
     insert into contact_lists (contact_id, list_id, account_id) select id, $3, $1 from inserted`,
    [accountId, JSON.stringify(contacts), listId],
  );
  return contacts.map((contact) => contact.id);
}
