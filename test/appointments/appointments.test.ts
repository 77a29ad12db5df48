// Appointments over real HTTPS (contract "Conversations both ways"): book with a contact
// (201, Appointment Booked delivered to a real receiver), page through a contact's
// appointments with signed cursors, cancel (twice is no change); another account's
// contact or appointment is 404; the section Appointments governs scoped keys.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startTestService, type TestService } from '../helpers/service.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.ts';
import { createContact, subscribe, WEBHOOK_ENV } from '../webhooks/webhook-fixtures.ts';

let service: TestService;
let receiver: WebhookReceiver;
beforeAll(async () => {
  service = await startTestService({ env: WEBHOOK_ENV });
  receiver = await startWebhookReceiver();
});
afterAll(async () => {
  await receiver?.close();
  await service?.stop();
});

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const booking = { starts_at: '2030-03-04T10:00:00+01:00', ends_at: '2030-03-04T10:30:00+01:00', title: 'Consultation', notes: 'Bring the contract' };

function book(apiKey: string, contactId: string, body: Record<string, unknown> = booking) {
  return service.request('POST', `/contacts/${contactId}/appointments`, { apiKey, body });
}

async function bookedEvents(accountId: string): Promise<any[]> {
  const { rows } = await service.services.pool.query<{ payload: any }>(`select payload from events where account_id = $1 and name = 'Appointment Booked' order by id`, [accountId]);
  return rows.map((row) => row.payload);
}

describe('POST /contacts/{contactId}/appointments', () => {
  test('books: 201 {success, data: {id, contactId, starts_at, ends_at, title, notes, status:"booked", created_at}}; Appointment Booked with the contact and the time is delivered', async () => {
    const account = await service.createAccount();
    await subscribe(service, account.userId, { url: receiver.url, events: ['Appointment Booked'] });
    const contactId = await createContact(service, account.apiKey);

    const response = await book(account.apiKey, contactId);
    expect(response.status).toBe(201);
    expect(response.body).toEqual({
      success: true,
      data: {
        id: expect.stringMatching(/^apt_/),
        contactId,
        starts_at: '2030-03-04T09:00:00.000Z',
        ends_at: '2030-03-04T09:30:00.000Z',
        title: 'Consultation',
        notes: 'Bring the contract',
        status: 'booked',
        created_at: expect.stringMatching(ISO),
      },
    });

    const mine = (all: WebhookReceiver['requests']) => all.filter((request) => JSON.parse(request.body).user?.id === account.userId);
    const [delivered] = mine(await receiver.waitFor((all) => mine(all).length >= 1));
    expect(delivered.headers['x-webhook-event']).toBe('Appointment Booked');
    expect(JSON.parse(delivered.body)).toMatchObject({
      event: 'Appointment Booked',
      user: { id: account.userId },
      data: {
        appointment: { id: response.body.data.id, starts_at: '2030-03-04T09:00:00.000Z', ends_at: '2030-03-04T09:30:00.000Z', title: 'Consultation' },
        contact: { id: contactId, phone_number: expect.stringMatching(/^\+1415555/) },
      },
    });
  });

  test('only starts_at and title are required: ends_at and notes are null', async () => {
    const account = await service.createAccount();
    const contactId = await createContact(service, account.apiKey);
    const response = await book(account.apiKey, contactId, { starts_at: '2030-01-01T08:00:00Z', title: 'Call' });
    expect(response.status).toBe(201);
    expect(response.body.data).toMatchObject({ starts_at: '2030-01-01T08:00:00.000Z', ends_at: null, notes: null, status: 'booked' });
  });

  test.each([
    ['starts_at missing', { title: 'Call' }, 'starts_at'],
    ['starts_at not ISO 8601', { starts_at: 'tomorrow at 10', title: 'Call' }, 'starts_at'],
    ['starts_at without a time zone', { starts_at: '2030-01-01T08:00:00', title: 'Call' }, 'starts_at'],
    ['title missing', { starts_at: '2030-01-01T08:00:00Z' }, 'title'],
    ['title empty', { starts_at: '2030-01-01T08:00:00Z', title: '   ' }, 'title'],
    ['title over 200 characters', { starts_at: '2030-01-01T08:00:00Z', title: 'x'.repeat(201) }, 'title'],
    ['notes over 2000 characters', { starts_at: '2030-01-01T08:00:00Z', title: 'Call', notes: 'x'.repeat(2001) }, 'notes'],
    ['ends_at not after starts_at', { starts_at: '2030-01-01T08:00:00Z', ends_at: '2030-01-01T08:00:00Z', title: 'Call' }, 'ends_at'],
  ])('400 when %s (the message names the field); nothing booked', async (_name, body, field) => {
    const account = await service.createAccount();
    const contactId = await createContact(service, account.apiKey);
    const response = await book(account.apiKey, contactId, body);
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ success: false, error_code: 400 });
    expect(response.body.error).toContain(field);
    expect(await bookedEvents(account.userId)).toEqual([]);
  });

  test("an unknown contact or another account's contact is 404, and nothing is booked", async () => {
    const owner = await service.createAccount();
    const other = await service.createAccount();
    const contactId = await createContact(service, owner.apiKey);
    for (const [apiKey, id] of [
      [other.apiKey, contactId],
      [owner.apiKey, 'ct_unknown'],
    ]) {
      const response = await book(apiKey, id);
      expect(response.status).toBe(404);
      expect(response.body).toEqual({ success: false, error: 'Contact not found', error_code: 404 });
    }
    expect(await bookedEvents(owner.userId)).toEqual([]);
    expect(await bookedEvents(other.userId)).toEqual([]);
  });
});

describe('GET /contacts/{contactId}/appointments', () => {
  test("pages through the contact's appointments in booking order with signed cursors: {success, appointments, next_cursor}", async () => {
    const account = await service.createAccount();
    const contactId = await createContact(service, account.apiKey);
    const otherContact = await createContact(service, account.apiKey);
    const ids: string[] = [];
    for (const title of ['One', 'Two', 'Three']) ids.push((await book(account.apiKey, contactId, { starts_at: '2030-05-01T09:00:00Z', title })).body.data.id);
    await book(account.apiKey, otherContact, { starts_at: '2030-05-01T09:00:00Z', title: 'Elsewhere' });

    const first = await service.request('GET', `/contacts/${contactId}/appointments`, { apiKey: account.apiKey, query: { limit: 2 } });
    expect(first.status).toBe(200);
    expect(first.body).toEqual({ success: true, appointments: [expect.objectContaining({ id: ids[0], title: 'One' }), expect.objectContaining({ id: ids[1] })], next_cursor: expect.any(String) });
    const second = await service.request('GET', `/contacts/${contactId}/appointments`, { apiKey: account.apiKey, query: { limit: 2, cursor: first.body.next_cursor } });
    expect(second.body).toEqual({ success: true, appointments: [expect.objectContaining({ id: ids[2], contactId })], next_cursor: null });

    const all = await service.request('GET', `/contacts/${contactId}/appointments`, { apiKey: account.apiKey });
    expect(all.body.appointments.map((a: { id: string }) => a.id)).toEqual(ids);

    // A cursor is bound to its contact's listing; an edited one is refused.
    const elsewhere = await service.request('GET', `/contacts/${otherContact}/appointments`, { apiKey: account.apiKey, query: { cursor: first.body.next_cursor } });
    expect(elsewhere.status).toBe(400);
    const edited = await service.request('GET', `/contacts/${contactId}/appointments`, { apiKey: account.apiKey, query: { cursor: `x${first.body.next_cursor}` } });
    expect(edited.status).toBe(400);
  });

  test("another account's contact is 404", async () => {
    const owner = await service.createAccount();
    const other = await service.createAccount();
    const contactId = await createContact(service, owner.apiKey);
    await book(owner.apiKey, contactId);
    const response = await service.request('GET', `/contacts/${contactId}/appointments`, { apiKey: other.apiKey });
    expect(response.status).toBe(404);
    expect(response.body).toEqual({ success: false, error: 'Contact not found', error_code: 404 });
  });
});

describe('POST /appointments/{id}/cancel', () => {
  test('200 {success, data} with status "cancelled"; cancelling twice is 200 with no change', async () => {
    const account = await service.createAccount();
    const contactId = await createContact(service, account.apiKey);
    const booked = (await book(account.apiKey, contactId)).body.data;

    const cancelled = await service.request('POST', `/appointments/${booked.id}/cancel`, { apiKey: account.apiKey });
    expect(cancelled.status).toBe(200);
    expect(cancelled.body).toEqual({ success: true, data: { ...booked, status: 'cancelled' } });
    const again = await service.request('POST', `/appointments/${booked.id}/cancel`, { apiKey: account.apiKey });
    expect(again.status).toBe(200);
    expect(again.body).toEqual(cancelled.body);

    const listed = await service.request('GET', `/contacts/${contactId}/appointments`, { apiKey: account.apiKey });
    expect(listed.body.appointments).toEqual([{ ...booked, status: 'cancelled' }]);
  });

  test("an unknown appointment or another account's is 404, and it stays booked", async () => {
    const owner = await service.createAccount();
    const other = await service.createAccount();
    const contactId = await createContact(service, owner.apiKey);
    const booked = (await book(owner.apiKey, contactId)).body.data;
    for (const [apiKey, id] of [
      [other.apiKey, booked.id],
      [owner.apiKey, 'apt_unknown'],
    ]) {
      const response = await service.request('POST', `/appointments/${id}/cancel`, { apiKey });
      expect(response.status).toBe(404);
      expect(response.body).toEqual({ success: false, error: 'Appointment not found', error_code: 404 });
    }
    const listed = await service.request('GET', `/contacts/${contactId}/appointments`, { apiKey: owner.apiKey });
    expect(listed.body.appointments[0].status).toBe('booked');
  });
});

describe('section Appointments for scoped keys', () => {
  test('a scoped key with the Appointments section books, lists and cancels; without it, 403 key_scope_denied', async () => {
    const account = await service.createAccount();
    const contactId = await createContact(service, account.apiKey);
    const allowed = await service.createScopedKey(account.userId, { read_only: false, tags: ['Appointments'] });
    const denied = await service.createScopedKey(account.userId, { read_only: false, tags: ['Contacts'] });
    const readOnly = await service.createScopedKey(account.userId, { read_only: true, tags: ['Appointments'] });

    const booked = await book(allowed, contactId);
    expect(booked.status).toBe(201);
    expect((await service.request('GET', `/contacts/${contactId}/appointments`, { apiKey: allowed })).status).toBe(200);
    expect((await service.request('GET', `/contacts/${contactId}/appointments`, { apiKey: readOnly })).status).toBe(200);
    expect((await book(readOnly, contactId)).body).toMatchObject({ success: false, error_code: 'key_read_only' });

    for (const response of [
      await book(denied, contactId),
      await service.request('GET', `/contacts/${contactId}/appointments`, { apiKey: denied }),
      await service.request('POST', `/appointments/${booked.body.data.id}/cancel`, { apiKey: denied }),
    ]) {
      expect(response.status).toBe(403);
      expect(response.body).toMatchObject({ success: false, error_code: 'key_scope_denied' });
    }
    const cancelled = await service.request('POST', `/appointments/${booked.body.data.id}/cancel`, { apiKey: allowed });
    expect(cancelled.status).toBe(200);
    expect(cancelled.body.data.status).toBe('cancelled');
  });
});
