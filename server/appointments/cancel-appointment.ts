// POST /appointments/{id}/cancel: an appointment of the account becomes cancelled;
// cancelling it again changes nothing. The spec has no event for it.
import { LockMode, type EntityManager } from '@mikro-orm/postgresql';
import { Appointment } from '../db/entities/index.ts';
import { flushOwned } from '../db/update-owned.ts';
import { NotFoundError } from '../errors.ts';
import { toAppointmentRecord, type AppointmentRecord } from './appointment-record.ts';

export async function cancelAppointment(em: EntityManager, accountId: string, appointmentId: string): Promise<AppointmentRecord> {
  return em.transactional(async (tx) => {
    const appointment = await tx.findOne(Appointment, { id: appointmentId, account: accountId }, { lockMode: LockMode.PESSIMISTIC_WRITE });
    // Another account's appointment is not found.
    if (!appointment) throw new NotFoundError('Appointment not found');
    if (appointment.status !== 'cancelled') {
      appointment.status = 'cancelled';
      appointment.cancelledAt = new Date();
      await flushOwned(tx, appointment);
    }
    return toAppointmentRecord(appointment);
  });
}
