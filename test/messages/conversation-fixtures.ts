// Shared set-up for conversation tests: contacts created over the API and
// messages recorded the one way messages are written (recordMessage).
import { expect } from 'vitest';
import { recordMessage, type RecordMessageInput } from '../../server/messages/record-message.ts';
import type { TestService } from '../helpers/service.ts';

let phoneCounter = 0;

/** A fresh valid phone number for each call in a test file. */
export function nextPhoneNumber(): string {
  phoneCounter += 1;
  return `+1415555${String(2600 + phoneCounter).padStart(4, '0')}`;
}

export async function createContact(
  service: TestService,
  apiKey: string,
  fields: { phoneNumber?: string; email?: string; firstName?: string; lastName?: string } = {},
): Promise<{ contactId: string; phoneNumber: string }> {
  const phoneNumber = fields.phoneNumber ?? nextPhoneNumber();
  const response = await service.request('POST', '/contacts', { apiKey, body: { ...fields, phoneNumber } });
  expect(response.status, response.text).toBe(200);
  return { contactId: response.body.data.contactId, phoneNumber };
}

export async function record(
  service: TestService,
  accountId: string,
  contactId: string,
  direction: RecordMessageInput['direction'],
  body: string,
  extra: Partial<RecordMessageInput> = {},
) {
  return recordMessage(service.services.orm.em.fork(), accountId, { contactId, direction, body, ...extra });
}

export type EventRow = { id: string; name: string; payload: any };

export async function eventsOf(service: TestService, accountId: string, name?: string): Promise<EventRow[]> {
  const { rows } = await service.services.pool.query<EventRow>(
    `select id, name, payload from events where account_id = $1 ${name ? 'and name = $2' : ''} order by created_at, id`,
    name ? [accountId, name] : [accountId],
  );
  return rows;
}

/** Polls until `check` returns a value (not undefined) or the deadline passes. */
export async function eventually<T>(check: () => Promise<T | undefined>, what: string, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
