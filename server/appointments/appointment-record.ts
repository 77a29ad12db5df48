// An appointment as the API shows it (and Appointment Booked carries it).
import type { Appointment } from '../db/entities/index.ts';

export type AppointmentRecord = {
  id: string;
  contactId: string;
  starts_at: string;
  ends_at: string | null;
  title: string;
  notes: string | null;
  status: Appointment['status'];
  created_at: string;
};

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
