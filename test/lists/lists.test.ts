// The contract's /lists endpoints over real HTTPS.
import { expect, test } from 'vitest';
import { serviceForFile } from '../helpers/service-for-file.ts';
import type { TestService } from '../helpers/service.ts';

let service: TestService;
let a: { userId: string; apiKey: string };
let b: { userId: string; apiKey: string };

serviceForFile({ accounts: [{}, {}] }, (started) => ({ service, accounts: [a, b] } = started));

test('POST /lists: 201 {success, data: List}', async () => {
  const response = await service.request('POST', '/lists', { apiKey: a.apiKey, body: { name: 'Customers', description: 'Paying' } });
  expect(response.status).toBe(201);
  expect(response.body).toEqual({
    success: true,
    data: { id: expect.stringMatching(/^lst_/), name: 'Customers', description: 'Paying', contact_count: 0, created_at: expect.any(String) },
  });
  expect(Number.isNaN(Date.parse(response.body.data.created_at))).toBe(false);
});

test('POST /lists without a name: 400 naming the field', async () => {
  const response = await service.request('POST', '/lists', { apiKey: a.apiKey, body: { description: 'x' } });
  expect(response.status).toBe(400);
  expect(response.body).toEqual({ success: false, error: 'name is required', error_code: 400 });
});

test('GET, PUT and DELETE /lists/{listId}', async () => {
  const created = await service.request('POST', '/lists', { apiKey: a.apiKey, body: { name: 'Old' } });
  const id = created.body.data.id;
  const got = await service.request('GET', `/lists/${id}`, { apiKey: a.apiKey });
  expect(got.body).toEqual({ success: true, data: created.body.data });
  const renamed = await service.request('PUT', `/lists/${id}`, { apiKey: a.apiKey, body: { name: 'New' } });
  expect(renamed.status).toBe(200);
  expect(renamed.body.data).toMatchObject({ id, name: 'New' });
  const deleted = await service.request('DELETE', `/lists/${id}`, { apiKey: a.apiKey });
  expect(deleted.status).toBe(200);
  expect(deleted.body).toEqual({ success: true });
  const gone = await service.request('GET', `/lists/${id}`, { apiKey: a.apiKey });
  expect(gone.status).toBe(404);
  expect(gone.body).toEqual({ success: false, error: `List ${id} not found`, error_code: 404 });
});

test('deleting a list keeps its contacts', async () => {
  const created = await service.request('POST', '/lists', { apiKey: a.apiKey, body: { name: 'Temp' } });
  expect(created.status, created.text).toBe(201);
  const list = created.body.data.id;
  const contact = await service.request('POST', '/contacts', { apiKey: a.apiKey, body: { phoneNumber: '+14155559001', listId: list } });
  expect(contact.status, contact.text).toBe(200);
  const members = await service.request('GET', `/lists/${list}/contacts`, { apiKey: a.apiKey });
  expect(members.status, members.text).toBe(200);
  expect(members.body.contacts.map((member: { id: string }) => member.id)).toEqual([contact.body.data.contactId]);

  const deleted = await service.request('DELETE', `/lists/${list}`, { apiKey: a.apiKey });
  expect(deleted.status, deleted.text).toBe(200);
  expect(deleted.body).toEqual({ success: true });
  expect((await service.request('GET', `/lists/${list}`, { apiKey: a.apiKey })).status).toBe(404);
  const found = await service.request('GET', '/contacts', { apiKey: a.apiKey, query: { phoneNumber: '+14155559001' } });
  expect(found.status, found.text).toBe(200);
  expect(found.body.contactId).toBe(contact.body.data.contactId);
});

test('GET /lists pages with next_cursor; GET /lists/{listId}/contacts pages the members', async () => {
  const account = await service.createAccount();
  const ids: string[] = [];
  for (let i = 0; i < 3; i += 1) ids.push((await service.request('POST', '/lists', { apiKey: account.apiKey, body: { name: `L${i}` } })).body.data.id);
  const first = await service.request('GET', '/lists', { apiKey: account.apiKey, query: { limit: 2 } });
  expect(first.body.lists.map((list: { id: string }) => list.id)).toEqual(ids.slice(0, 2));
  expect(typeof first.body.next_cursor).toBe('string');
  const second = await service.request('GET', '/lists', { apiKey: account.apiKey, query: { limit: 2, cursor: first.body.next_cursor } });
  expect(second.body).toEqual({ success: true, lists: [expect.objectContaining({ id: ids[2] })], next_cursor: null });

  const members: string[] = [];
  for (let i = 0; i < 3; i += 1) {
    const created = await service.request('POST', '/contacts', { apiKey: account.apiKey, body: { phoneNumber: `+1415555930${i}`, listId: ids[0] } });
    members.push(created.body.data.contactId);
  }
  const page1 = await service.request('GET', `/lists/${ids[0]}/contacts`, { apiKey: account.apiKey, query: { limit: 2 } });
  const page2 = await service.request('GET', `/lists/${ids[0]}/contacts`, { apiKey: account.apiKey, query: { limit: 2, cursor: page1.body.next_cursor } });
  expect([...page1.body.contacts, ...page2.body.contacts].map((contact: { id: string }) => contact.id)).toEqual(members);
  expect(page2.body.next_cursor).toBeNull();
  expect((await service.request('GET', `/lists/${ids[0]}`, { apiKey: account.apiKey })).body.data.contact_count).toBe(3);
  const wrongListCursor = await service.request('GET', `/lists/${ids[1]}/contacts`, { apiKey: account.apiKey, query: { cursor: page1.body.next_cursor } });
  expect(wrongListCursor.status).toBe(400);
});

test("account B cannot read, change, delete or list A's lists", async () => {
  const id = (await service.request('POST', '/lists', { apiKey: a.apiKey, body: { name: 'Private' } })).body.data.id;
  expect((await service.request('GET', `/lists/${id}`, { apiKey: b.apiKey })).status).toBe(404);
  expect((await service.request('PUT', `/lists/${id}`, { apiKey: b.apiKey, body: { name: 'Hijack' } })).status).toBe(404);
  expect((await service.request('DELETE', `/lists/${id}`, { apiKey: b.apiKey })).status).toBe(404);
  expect((await service.request('GET', `/lists/${id}/contacts`, { apiKey: b.apiKey })).status).toBe(404);
  const listing = await service.request('GET', '/lists', { apiKey: b.apiKey, query: { limit: 100 } });
  expect(listing.body.lists.map((list: { id: string }) => list.id)).not.toContain(id);
  expect((await service.request('GET', `/lists/${id}`, { apiKey: a.apiKey })).body.data.name).toBe('Private');
});
