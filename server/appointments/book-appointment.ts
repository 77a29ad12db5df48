// POST /contacts/{contactId}/appointments: books an appointment with one of the account's
// contacts and announces Appointment Booked (the appointment, its time, and the contact)
// in the same transaction.
import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { requireContact } from '../contacts/find-contact.ts';
import { Appointment } from '../db/entities/index.ts';
import { newId } from '../db/ids.ts';
import { InvalidInputError } from '../errors.ts';
import { emit } from '../events/emit.ts';
import { columnDateTime } from '../input-rules.ts';
import { contactEventBlock } from '../messages/contact-event-data.ts';
import { toAppointmentRecord, type AppointmentRecord } from './appointment-record.ts';

export const MAX_APPOINTMENT_TITLE_LENGTH = 200;
export const MAX_APPOINTMENT_NOTES_LENGTH = 2000;

export const AppointmentBookInput = z.object({
  starts_at: columnDateTime('starts_at must be an ISO 8601 date-time with a time zone, between the years 0001 and 9999'),
  ends_at: columnDateTime('ends_at must be an ISO 8601 date-time with a time zone, between the years 0001 and 9999')
    .optional()
    .describe('After starts_at.'),
  title: z
    .string()
    .trim()
    .min(1, 'title must not be empty')
    .max(MAX_APPOINTMENT_TITLE_LENGTH, `title must be at most ${MAX_APPOINTMENT_TITLE_LENGTH} characters`),
  notes: z.string().max(MAX_APPOINTMENT_NOTES_LENGTH, `notes must be at most ${MAX_APPOINTMENT_NOTES_LENGTH} characters`).optional(),
});
export type AppointmentBookInput = z.infer<typeof AppointmentBookInput>;

export async function bookAppointment(
  em: EntityManager,
  accountId: string,
  contactId: string,
  input: AppointmentBookInput,
): Promise<AppointmentRecord> {
  const startsAt = new Date(input.starts_at);
  const endsAt = input.ends_at === undefined ? null : new Date(input.ends_at);
  if (endsAt && endsAt.getTime() <= startsAt.getTime()) {
    throw new InvalidInputError('ends_at must be after starts_at', { details: [{ path: 'ends_at', message: 'must be after starts_at' }] });
  }
  return em.transactional(async (tx) => {
    const contact = await requireContact(tx, accountId, contactId);
    const appointment = tx.create(Appointment, {
      id: newId('apt'),
      account: accountId,
      contact: contact.id,
      startsAt,
      endsAt,
      title: input.title,
      notes: input.notes ?? null,
      status: 'booked',
      createdAt: new Date(),
    });
    await tx.persist(appointment).flush();
    const record = toAppointmentRecord(appointment);
    await emit(tx, accountId, 'Appointment Booked', { appointment: record, contact: contactEventBlock(contact) });
    return record;
  });
}
