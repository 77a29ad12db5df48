import { describe, expect, test } from 'vitest';
import { createTask } from '../../server/tasks/create-task.ts';
import { updateTask } from '../../server/tasks/update-task.ts';
import { serviceForFile } from '../helpers/service-for-file.ts';
import type { TestService } from '../helpers/service.ts';

let service: TestService;
serviceForFile({}, (started) => ({ service } = started));

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
let phoneCounter = 0;

async function newContact(apiKey: string): Promise<string> {
  phoneCounter += 1;
  const created = await service.request('POST', '/contacts', { apiKey, body: { phoneNumber: `+1415555${String(2600 + phoneCounter).padStart(4, '0')}` } });
  expect(created.status).toBe(200);
  return created.body.data.contactId;
}

async function newTask(apiKey: string, body: Record<string, unknown> = { title: 'Call back' }) {
  const created = await service.request('POST', '/tasks', { apiKey, body });
  expect(created.status).toBe(201);
  return created.body.data;
}

type EventRow = { name: string; payload: { event: string; user: { id: string }; data: Record<string, unknown> } };

/** Task events of the account, sorted by name (ids made in one millisecond are not ordered). */
async function taskEvents(accountId: string): Promise<EventRow[]> {
  const { rows } = await service.services.pool.query<EventRow>(
    `select name, payload from events where account_id = $1 and name like 'Task %' order by name, id`,
    [accountId],
  );
  return rows;
}

async function countTasks(accountId: string): Promise<number> {
  const { rows } = await service.services.pool.query<{ count: string }>('select count(*) from tasks where account_id = $1', [accountId]);
  return Number(rows[0].count);
}

function envelope(status: number, error: string) {
  return { success: false, error, error_code: status };
}

describe('POST /tasks', () => {
  test('creates an open task with only a title: 201 {success, data: Task}', async () => {
    const { apiKey } = await service.createAccount();
    const response = await service.request('POST', '/tasks', { apiKey, body: { title: 'Call back' } });
    expect(response.status).toBe(201);
    expect(response.body).toEqual({
      success: true,
      data: {
        id: expect.stringMatching(/^tsk_/),
        title: 'Call back',
        contact_id: null,
        due_at: null,
        status: 'open',
        created_at: expect.stringMatching(ISO),
        updated_at: expect.stringMatching(ISO),
      },
    });
  });

  test('stores contactId, due_at (ISO date-time) and status', async () => {
    const { apiKey } = await service.createAccount();
    const contactId = await newContact(apiKey);
    const response = await service.request('POST', '/tasks', {
      apiKey,
      body: { title: 'Send quote', contactId, due_at: '2030-01-02T10:00:00+02:00', status: 'done' },
    });
    expect(response.status).toBe(201);
    expect(response.body.data).toMatchObject({ title: 'Send quote', contact_id: contactId, due_at: '2030-01-02T08:00:00.000Z', status: 'done' });
  });

  test('title is required (400 names the field)', async () => {
    const { apiKey } = await service.createAccount();
    const missing = await service.request('POST', '/tasks', { apiKey, body: { status: 'open' } });
    expect(missing.status).toBe(400);
    expect(missing.body).toEqual(envelope(400, 'title is required'));
    const blank = await service.request('POST', '/tasks', { apiKey, body: { title: '   ' } });
    expect(blank.status).toBe(400);
    expect(blank.body).toEqual(envelope(400, 'title: must not be empty'));
  });

  test('status must be open or done; due_at must be an ISO date-time', async () => {
    const { apiKey } = await service.createAccount();
    const status = await service.request('POST', '/tasks', { apiKey, body: { title: 'x', status: 'closed' } });
    expect(status.status).toBe(400);
    expect(status.body).toEqual(envelope(400, 'status: must be open or done'));
    const dueAt = await service.request('POST', '/tasks', { apiKey, body: { title: 'x', due_at: 'tomorrow' } });
    expect(dueAt.status).toBe(400);
    expect(dueAt.body).toEqual(envelope(400, 'due_at: must be an ISO 8601 date-time with a time zone, between the years 0001 and 9999'));
  });

  test('a due_at PostgreSQL cannot store (year 0000, or past 9999 in UTC) is 400, not a server error, and creates nothing', async () => {
    const { apiKey } = await service.createAccount();
    for (const due_at of ['0000-12-31T23:59:59Z', '0000-06-01T00:00:00+01:00', '9999-12-31T23:00:00-05:00']) {
      const response = await service.request('POST', '/tasks', { apiKey, body: { title: 'x', due_at } });
      expect(response.status, due_at).toBe(400);
      expect(response.body, due_at).toEqual(envelope(400, 'due_at: must be an ISO 8601 date-time with a time zone, between the years 0001 and 9999'));
    }
    const list = await service.request('GET', '/tasks', { apiKey });
    expect(list.body.tasks).toEqual([]);
  });

  test("contactId must be a contact of the account, else 404 and nothing is created", async () => {
    const owner = await service.createAccount();
    const other = await service.createAccount();
    const foreignContact = await newContact(owner.apiKey);
    for (const contactId of [foreignContact, 'ct_unknown']) {
      const response = await service.request('POST', '/tasks', { apiKey: other.apiKey, body: { title: 'x', contactId } });
      expect(response.status).toBe(404);
      expect(response.body).toEqual(envelope(404, 'Contact not found'));
    }
    expect(await countTasks(other.userId)).toBe(0);
    expect(await taskEvents(other.userId)).toEqual([]);
  });

  test('requires an API key (401)', async () => {
    const response = await service.request('POST', '/tasks', { body: { title: 'x' } });
    expect(response.status).toBe(401);
    expect(response.body).toEqual(envelope(401, 'Invalid API key'));
  });
});

describe('GET /tasks/{id}', () => {
  test('returns {success, data: Task}', async () => {
    const { apiKey } = await service.createAccount();
    const task = await newTask(apiKey);
    const response = await service.request('GET', `/tasks/${task.id}`, { apiKey });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ success: true, data: task });
  });

  test('an unknown id is 404', async () => {
    const { apiKey } = await service.createAccount();
    const response = await service.request('GET', '/tasks/tsk_unknown', { apiKey });
    expect(response.status).toBe(404);
    expect(response.body).toEqual(envelope(404, 'Task not found'));
  });
});

describe('PUT /tasks/{id}', () => {
  test('changes any of title, contactId, due_at, status and returns the task', async () => {
    const { apiKey } = await service.createAccount();
    const contactId = await newContact(apiKey);
    const task = await newTask(apiKey);
    const response = await service.request('PUT', `/tasks/${task.id}`, {
      apiKey,
      body: { title: 'Renamed', contactId, due_at: '2031-05-06T07:08:09Z', status: 'done' },
    });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      success: true,
      data: { ...task, title: 'Renamed', contact_id: contactId, due_at: '2031-05-06T07:08:09.000Z', status: 'done', updated_at: expect.stringMatching(ISO) },
    });
    const read = await service.request('GET', `/tasks/${task.id}`, { apiKey });
    expect(read.body).toEqual(response.body);
  });

  test('omitted fields keep their values; null clears contactId and due_at', async () => {
    const { apiKey } = await service.createAccount();
    const contactId = await newContact(apiKey);
    const task = await newTask(apiKey, { title: 'Keep', contactId, due_at: '2030-01-01T00:00:00Z' });
    const status = await service.request('PUT', `/tasks/${task.id}`, { apiKey, body: { status: 'done' } });
    expect(status.body.data).toMatchObject({ title: 'Keep', contact_id: contactId, due_at: '2030-01-01T00:00:00.000Z', status: 'done' });
    const cleared = await service.request('PUT', `/tasks/${task.id}`, { apiKey, body: { contactId: null, due_at: null } });
    expect(cleared.status).toBe(200);
    expect(cleared.body.data).toMatchObject({ title: 'Keep', contact_id: null, due_at: null, status: 'done' });
  });

  test('no fields to update is 400', async () => {
    const { apiKey } = await service.createAccount();
    const task = await newTask(apiKey);
    const response = await service.request('PUT', `/tasks/${task.id}`, { apiKey, body: {} });
    expect(response.status).toBe(400);
    expect(response.body).toEqual(envelope(400, 'No fields to update'));
  });

  test('an unknown id is 404; an unknown contactId is 404 and changes nothing', async () => {
    const { apiKey, userId } = await service.createAccount();
    const unknown = await service.request('PUT', '/tasks/tsk_unknown', { apiKey, body: { title: 'x' } });
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual(envelope(404, 'Task not found'));

    const task = await newTask(apiKey);
    const badContact = await service.request('PUT', `/tasks/${task.id}`, { apiKey, body: { title: 'Changed', contactId: 'ct_unknown', status: 'done' } });
    expect(badContact.status).toBe(404);
    expect(badContact.body).toEqual(envelope(404, 'Contact not found'));
    expect((await service.request('GET', `/tasks/${task.id}`, { apiKey })).body.data).toEqual(task);
    expect((await taskEvents(userId)).map((event) => event.name)).toEqual(['Task Created']);
  });
});

describe('DELETE /tasks/{id}', () => {
  test('deletes the task: {success}; it is then not found', async () => {
    const { apiKey } = await service.createAccount();
    const task = await newTask(apiKey);
    const response = await service.request('DELETE', `/tasks/${task.id}`, { apiKey });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ success: true });
    expect((await service.request('GET', `/tasks/${task.id}`, { apiKey })).status).toBe(404);
    const again = await service.request('DELETE', `/tasks/${task.id}`, { apiKey });
    expect(again.status).toBe(404);
    expect(again.body).toEqual(envelope(404, 'Task not found'));
  });
});

describe('account isolation', () => {
  test("another account's task is not found for read, update or delete, and is not listed", async () => {
    const owner = await service.createAccount();
    const other = await service.createAccount();
    const task = await newTask(owner.apiKey, { title: 'Private' });
    const otherTask = await newTask(other.apiKey, { title: 'Mine' });

    for (const [method, body] of [['GET', undefined], ['PUT', { status: 'done' }], ['DELETE', undefined]] as const) {
      const response = await service.request(method, `/tasks/${task.id}`, { apiKey: other.apiKey, body });
      expect(response.status).toBe(404);
      expect(response.body).toEqual(envelope(404, 'Task not found'));
    }
    expect((await service.request('GET', `/tasks/${task.id}`, { apiKey: owner.apiKey })).body.data).toEqual(task);

    const listed = await service.request('GET', '/tasks', { apiKey: other.apiKey });
    expect(listed.body).toEqual({ success: true, tasks: [otherTask], next_cursor: null });
  });
});

describe('GET /tasks (pagination)', () => {
  test('pages with limit and next_cursor, null on the last page, oldest first', async () => {
    const { apiKey } = await service.createAccount();
    const created = [];
    for (let i = 1; i <= 5; i++) created.push(await newTask(apiKey, { title: `Task ${i}` }));

    const seen = [];
    let cursor: string | undefined;
    const pageSizes = [];
    do {
      const page = await service.request('GET', '/tasks', { apiKey, query: { limit: 2, cursor } });
      expect(page.status).toBe(200);
      expect(page.body.success).toBe(true);
      pageSizes.push(page.body.tasks.length);
      seen.push(...page.body.tasks);
      cursor = page.body.next_cursor ?? undefined;
      if (page.body.tasks.length < 2) expect(page.body.next_cursor).toBeNull();
    } while (cursor);
    expect(pageSizes).toEqual([2, 2, 1]);
    expect(seen.map((task) => task.id).sort()).toEqual(created.map((task) => task.id).sort());
    expect(seen).toEqual([...seen].sort((a, b) => (a.id < b.id ? -1 : 1)));

    const whole = await service.request('GET', '/tasks', { apiKey });
    expect(whole.body.tasks).toHaveLength(5);
    expect(whole.body.next_cursor).toBeNull();
  });

  test('an invalid cursor is 400, also a cursor of another account', async () => {
    const owner = await service.createAccount();
    const other = await service.createAccount();
    await newTask(owner.apiKey);
    await newTask(owner.apiKey);
    const first = await service.request('GET', '/tasks', { apiKey: owner.apiKey, query: { limit: 1 } });
    expect(first.body.next_cursor).toEqual(expect.any(String));

    for (const [apiKey, cursor] of [[owner.apiKey, 'not-a-cursor'], [owner.apiKey, `${first.body.next_cursor}x`], [other.apiKey, first.body.next_cursor]]) {
      const response = await service.request('GET', '/tasks', { apiKey, query: { cursor } });
      expect(response.status).toBe(400);
      expect(response.body).toEqual(envelope(400, 'Invalid cursor'));
    }
  });

  test('limit is at most 100', async () => {
    const { apiKey } = await service.createAccount();
    const response = await service.request('GET', '/tasks', { apiKey, query: { limit: 101 } });
    expect(response.status).toBe(400);
    expect(response.body).toEqual(envelope(400, 'limit must be at most 100'));
  });
});

describe('task events (outbox, same transaction as the change)', () => {
  test('create emits Task Created with the task record', async () => {
    const { apiKey, userId } = await service.createAccount();
    const task = await newTask(apiKey);
    const events = await taskEvents(userId);
    expect(events.map((event) => event.name)).toEqual(['Task Created']);
    expect(events[0].payload).toMatchObject({ event: 'Task Created', user: { id: userId }, data: task });
  });

  test('create with status done emits Task Created and Task Completed', async () => {
    const { apiKey, userId } = await service.createAccount();
    const task = await newTask(apiKey, { title: 'Already done', status: 'done' });
    const events = await taskEvents(userId);
    expect(events.map((event) => event.name)).toEqual(['Task Completed', 'Task Created']);
    for (const event of events) expect(event.payload.data).toEqual(task);
  });

  test('every update emits Task Updated; Task Completed only when the status becomes done', async () => {
    const { apiKey, userId } = await service.createAccount();
    const task = await newTask(apiKey);
    const names = async () => (await taskEvents(userId)).map((event) => event.name);

    const renamed = await service.request('PUT', `/tasks/${task.id}`, { apiKey, body: { title: 'Renamed' } });
    expect(renamed.status, renamed.text).toBe(200);
    expect(await names()).toEqual(['Task Created', 'Task Updated']);

    const done = await service.request('PUT', `/tasks/${task.id}`, { apiKey, body: { status: 'done' } });
    expect(done.status, done.text).toBe(200);
    expect(await names()).toEqual(['Task Completed', 'Task Created', 'Task Updated', 'Task Updated']);
    const completed = (await taskEvents(userId)).find((event) => event.name === 'Task Completed');
    expect(completed?.payload.data).toEqual(done.body.data);
    expect((await taskEvents(userId)).filter((event) => event.name === 'Task Updated').map((event) => event.payload.data)).toEqual(
      expect.arrayContaining([renamed.body.data, done.body.data]),
    );

    // Done again: an update, but not a new completion. Then reopened: an update only.
    const doneAgain = await service.request('PUT', `/tasks/${task.id}`, { apiKey, body: { status: 'done' } });
    expect(doneAgain.status, doneAgain.text).toBe(200);
    const reopened = await service.request('PUT', `/tasks/${task.id}`, { apiKey, body: { status: 'open' } });
    expect(reopened.status, reopened.text).toBe(200);
    expect(reopened.body.data.status).toBe('open');
    expect(await names()).toEqual(['Task Completed', 'Task Created', 'Task Updated', 'Task Updated', 'Task Updated', 'Task Updated']);
  });

  test('delete and failed changes emit nothing', async () => {
    const { apiKey, userId } = await service.createAccount();
    const task = await newTask(apiKey);
    const empty = await service.request('PUT', `/tasks/${task.id}`, { apiKey, body: {} });
    expect(empty.status, empty.text).toBe(400);
    const badContact = await service.request('PUT', `/tasks/${task.id}`, { apiKey, body: { status: 'done', contactId: 'ct_unknown' } });
    expect(badContact.status, badContact.text).toBe(404);
    const badCreate = await service.request('POST', '/tasks', { apiKey, body: { title: 'x', status: 'done', contactId: 'ct_unknown' } });
    expect(badCreate.status, badCreate.text).toBe(404);
    // The delete itself succeeded (so "nothing emitted" is about a real deletion).
    const deleted = await service.request('DELETE', `/tasks/${task.id}`, { apiKey });
    expect(deleted.status, deleted.text).toBe(200);
    expect((await service.request('GET', `/tasks/${task.id}`, { apiKey })).status).toBe(404);
    expect((await taskEvents(userId)).map((event) => event.name)).toEqual(['Task Created']);
  });

  test('the event rows roll back with the change they announce', async () => {
    const { apiKey, userId } = await service.createAccount();
    const task = await newTask(apiKey);
    const em = service.services.orm.em.fork();
    const rollback = new Error('roll back');
    await expect(
      em.transactional(async (tx) => {
        await createTask(tx, userId, { title: 'Never', status: 'done' });
        await updateTask(tx, userId, task.id, { status: 'done' });
        throw rollback;
      }),
    ).rejects.toBe(rollback);
    expect(await countTasks(userId)).toBe(1);
    expect((await service.request('GET', `/tasks/${task.id}`, { apiKey })).body.data.status).toBe('open');
    expect((await taskEvents(userId)).map((event) => event.name)).toEqual(['Task Created']);
  });
});

describe('scoped access by userId', () => {
  test("an agency's tasks for a client live in the client account", async () => {
    const agency = await service.createAccount({ agency: true });
    const client = await service.request('POST', '/sub-accounts', {
      apiKey: agency.apiKey,
      body: { email: `task-client-${Date.now()}@example.com`, first_name: 'Cli', last_name: 'Ent', usage_limits: { monthly_credits: 10 } },
    });
    expect(client.status).toBe(201);
    const clientId = client.body.data.id;
    const created = await service.request('POST', '/tasks', { apiKey: agency.apiKey, query: { userId: clientId }, body: { title: 'For the client' } });
    expect(created.status).toBe(201);
    expect((await service.request('GET', '/tasks', { apiKey: agency.apiKey })).body.tasks).toEqual([]);
    expect((await service.request('GET', '/tasks', { apiKey: agency.apiKey, query: { userId: clientId } })).body.tasks).toEqual([created.body.data]);
    expect((await service.request('GET', `/tasks/${created.body.data.id}`, { apiKey: agency.apiKey })).status).toBe(404);
    expect((await taskEvents(clientId)).map((event) => event.payload.user.id)).toEqual([clientId]);
  });
});
