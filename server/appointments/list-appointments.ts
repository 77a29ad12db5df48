// GET /contacts/{contactId}/appointments: a contact's appointments in booking order,
// a page at a time with signed keyset cursors.
import type { EntityManager } from '@mikro-orm/postgresql';
import { requireContact } from '../contacts/find-contact.ts';
import { Appointment } from '../db/entities/index.ts';
import { readPage, writePage, type PageInput } from '../pagination.ts';
import type { Secrets } from '../secrets.ts';
import { toAppointmentRecord, type AppointmentRecord } from './appointment-record.ts';

export async function listAppointments(
  em: EntityManager,
  secrets: Secrets,
  accountId: string,
  contactId: string,
  input: PageInput,
): Promise<{ appointments: AppointmentRecord[]; next_cursor: string | null }> {
  const scope = `appointments:${accountId}:${contactId}`;
  const page = readPage(secrets, scope, input);
  await requireContact(em, accountId, contactId);
  const rows = await em.find(
    Appointment,
    { account: accountId, contact: contactId, ...(page.after ? { id: { $gt: page.after } } : {}) },
    { orderBy: { id: 'asc' }, limit: page.limit + 1 },
  );
  const { items, next_cursor } = writePage(secrets, scope, rows, page.limit, (row) => row.id);
  return { appointments: items.map(toAppointmentRecord), next_cursor };
}
