// A contact created with lists is all or nothing, even when the process dies (SIGKILL)
// mid-request: no stored contact lacks a membership or its Contact Created event, and every
// contact the API confirmed before the crash is stored.
import { afterAll, beforeAll, expect, test } from 'vitest';
import { startTestService, type TestService } from '../helpers/service.ts';
import { call, killHard, phone, startChildService, stopChildService, waitFor, type ChildService } from './fixtures.ts';

const LOOPS = 24;

let service: TestService;
let first: ChildService | undefined;
let restarted: ChildService | undefined;

beforeAll(async () => {
  // The test's database and its own view of it; the requests go to child processes.
  service = await startTestService({ env: { ROLE: 'api' } });
});

afterAll(async () => {
  if (first) await killHard(first.child);
  await stopChildService(restarted);
  await service?.stop();
});

test('SIGKILL while contacts with 3 lists are being created leaves no partial contact, and every confirmed contact is stored', async () => {
  const account = await service.createAccount();
  const listIds: string[] = [];
  for (const name of ['a', 'b', 'c']) {
    const created = await service.request('POST', '/v1/lists', { apiKey: account.apiKey, body: { name } });
    expect(created.status, created.text).toBe(201);
    listIds.push(created.body.data.id);
  }

  first = await startChildService(service.databaseUrl);
  const { origin, dataDir } = first;
  const confirmed: string[] = [];
  let next = 0;
  let killed = false;
  const cutOff: string[] = [];
  const loop = async () => {
    while (!killed) {
      const index = next++;
      let answer: Awaited<ReturnType<typeof call>>;
      try {
        answer = await call(origin, 'POST', '/v1/contacts', { apiKey: account.apiKey, body: { phoneNumber: phone(index), listIds } });
      } catch (error) {
        // Only the kill's own effect is tolerated: the connection dropped or refused, after the kill.
        const code = connectionFailureCode(error);
        if (!killed || code === null) throw error;
        cutOff.push(code);
        continue;
      }
      // An answer is the created contact, before or after the kill flag was raised; nothing else.
      expect(answer.status, answer.text).toBe(200);
      confirmed.push(answer.body.data.contactId);
    }
  };
  const loops = Array.from({ length: LOOPS }, loop);
  // Killed with requests in flight on every loop, after a good number were confirmed.
  await waitFor(async () => (confirmed.length >= 100 ? true : undefined), '100 confirmed contacts');
  killed = true;
  await killHard(first.child);
  await Promise.all(loops);
  first = undefined;
  // Some requests were cut off: more were sent than confirmed, and each lost one ended in a connection failure.
  expect(cutOff.length).toBeGreaterThan(0);
  expect(next).toBe(confirmed.length + cutOff.length);

  // A new process on the same database and DATA_DIR (whose lock the dead one still names).
  restarted = await startChildService(service.databaseUrl, {}, dataDir);

  const pool = service.services.pool;
  const { rows: contacts } = await pool.query<{ id: string; lists: string[] | null; events: number }>(
    `select c.id,
            (select array_agg(cl.list_id order by cl.list_id) from contact_lists cl where cl.contact_id = c.id) as lists,
            (select count(*)::int from events e where e.account_id = c.account_id and e.name = 'Contact Created'
                and e.payload->'data'->'contact'->>'id' = c.id) as events
       from contacts c where c.account_id = $1`,
    [account.userId],
  );
  const sortedLists = [...listIds].sort();
  const partial = contacts.filter((contact) => JSON.stringify(contact.lists) !== JSON.stringify(sortedLists) || contact.events !== 1);
  expect(partial).toEqual([]);
  // No membership or event without its contact.
  const { rows: orphans } = await pool.query(
    `select 'membership' as what, cl.contact_id as id from contact_lists cl where cl.account_id = $1 and not exists (select 1 from contacts c where c.id = cl.contact_id)
     union all
     select 'event', e.payload->'data'->'contact'->>'id' from events e where e.account_id = $1 and e.name = 'Contact Created'
        and not exists (select 1 from contacts c where c.id = e.payload->'data'->'contact'->>'id')`,
    [account.userId],
  );
  expect(orphans).toEqual([]);
  const stored = new Set(contacts.map((contact) => contact.id));
  expect(confirmed.filter((id) => !stored.has(id))).toEqual([]);
  expect(stored.size).toBeGreaterThanOrEqual(confirmed.length);

  // The restarted process creates contacts again.
  const again = await call(restarted.origin, 'POST', '/v1/contacts', { apiKey: account.apiKey, body: { phoneNumber: phone(100_000), listIds } });
  expect(again.status, again.text).toBe(200);
});

/** The connection-level code of a request that failed because the process went away; null for anything else. */
function connectionFailureCode(error: unknown): string | null {
  // undici's fetch rejects with TypeError('fetch failed' or 'terminated') whose cause is the socket error.
  if (!(error instanceof TypeError)) return null;
  const cause = (error as { cause?: { code?: unknown } }).cause;
  const code = typeof cause?.code === 'string' ? cause.code : null;
  return code !== null && CONNECTION_FAILURES.has(code) ? code : null;
}
const CONNECTION_FAILURES = new Set(['ECONNRESET', 'ECONNREFUSED', 'EPIPE', 'UND_ERR_SOCKET']);
