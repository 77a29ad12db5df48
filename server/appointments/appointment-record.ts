// An appointment as the API shows it (and Appointment Booked carries it).
import { z } from 'zod';
import { APPOINTMENT_STATUSES } from '../db/entities/appointment.ts';
import type { Appointment } from '../db/entities/index.ts';

export const AppointmentRecord = z.object({
  id: z.string(),
  contactId: z.string(),
  starts_at: z.string(),
  ends_at: z.string().nullable(),
  title: z.string(),
  notes: z.string().nullable(),
  status: z.enum(APPOINTMENT_STATUSES),
  created_at: z.string(),
});
export type AppointmentRecord = z.infer<typeof AppointmentRecord>;

export function toAppointmentRecord(appointment: Appointment): AppointmentRecord {
  return {
    id: appointment.id,
    contactId: appointment.contact.id,
    starts_at: appointment.startsAt.toISOString(),
    ends_at: appointment.endsAt ? appointment.endsAt.toISOString() : null,
    title: appointment.title,
    notes: appointment.notes ?? null,
    status: appointment.status,
    created_at: appointment.createdAt.toISOString(),
  };
}
