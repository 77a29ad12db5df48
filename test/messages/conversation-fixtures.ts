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

/** When the `n`th message of insertConversation was written: one second apart. */
export function bulkMessageTime(n: number): Date {
  return new Date(Date.UTC(2026, 0, 1) + n * 1000);
}

/**
 * Messages `from`..`to` of a long conversation, written in one SQL statement (recordMessage
 * per message would make a test of a thousand messages slow): message n is inbound when n is
 * odd, outbound when even, reads `message <n>` followed by `padding` characters `x`, and was
 * written at bulkMessageTime(n), in `sessionId` when given (whose last message and activity
 * then follow the newest of its messages).
 */
export async function insertConversation(
  service: TestService,
  accountId: string,
  contactId: string,
  range: { from: number; to: number; sessionId?: string; padding?: number },
): Promise<void> {
  await service.services.pool.query(
    `insert into messages (id, account_id, contact_id, session_id, direction, body, created_at)
     select 'msg_' || $2 || '_' || lpad(n::text, 6, '0'), $1, $2, $3,
            case when n % 2 = 1 then 'inbound' else 'outbound' end,
            'message ' || n || repeat('x', $6::int),
            timestamptz '2026-01-01T00:00:00Z' + n * interval '1 second'
       from generate_series($4::int, $5::int) as n`,
    [accountId, contactId, range.sessionId ?? null, range.from, range.to, range.padding ?? 0],
  );
  // The session's record of its last message, as the message writer keeps it.
  if (range.sessionId) {
    await service.services.pool.query(
      `update chat_sessions s set (last_message_id, last_message_direction, last_activity_at) = (
         select m.id, m.direction, m.created_at from messages m where m.session_id = s.id and m.account_id = s.account_id order by m.created_at desc, m.id desc limit 1
       ) where s.id = $1 and s.account_id = $2`,
      [range.sessionId, accountId],
    );
  }
}

/** A chat session written directly, started at bulkMessageTime(startedAt). */
export async function insertSession(service: TestService, accountId: string, contactId: string, session: { id: string; startedAt: number; open: boolean }) {
  await service.services.pool.query(
    `insert into chat_sessions (id, account_id, contact_id, status, tag, started_at, ended_at)
     values ($1, $2, $3, $4, null, timestamptz '2026-01-01T00:00:00Z' + $5::int * interval '1 second', $6::timestamptz)`,
    [session.id, accountId, contactId, session.open ? 'ChatSessionOpened' : 'ChatSessionClosed', session.startedAt, session.open ? null : bulkMessageTime(session.startedAt + 1)],
  );
}
