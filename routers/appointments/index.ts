// Appointments with a contact: book, page through, cancel (the contract's
// "Conversations both ways"). Section Appointments, so scoped keys can be given it.
import { z } from 'zod';
import { AppointmentRecord } from '../../server/appointments/appointment-record.ts';
import { AppointmentBookInput, bookAppointment } from '../../server/appointments/book-appointment.ts';
import { cancelAppointment } from '../../server/appointments/cancel-appointment.ts';
import { listAppointments } from '../../server/appointments/list-appointments.ts';
import { PageInput } from '../../server/pagination.ts';
import { accountProcedure, router } from '../../server/trpc.ts';

const AppointmentData = z.object({ success: z.literal(true), data: AppointmentRecord });
const ContactId = z.object({ contactId: z.string() });
const tags = ['Appointments'];

export const appointmentsRouter = router({
  book: accountProcedure
    .meta({
      openapi: { method: 'POST', path: '/contacts/{contactId}/appointments', tags, summary: 'Book an appointment with a contact (emits Appointment Booked)' },
      section: 'Appointments',
      access: 'write',
      successStatus: 201,
      errorShapes: { '404': 'envelope' },
    })
    .input(AppointmentBookInput.extend(ContactId.shape))
    .output(AppointmentData)
    .mutation(async ({ ctx, input }) => {
      const { contactId, ...fields } = input;
      return { success: true as const, data: await bookAppointment(ctx.em, ctx.account.id, contactId, fields) };
    }),

  listForContact: accountProcedure
    .meta({
      openapi: { method: 'GET', path: '/contacts/{contactId}/appointments', tags, summary: "Page through a contact's appointments, in booking order" },
      section: 'Appointments',
      access: 'read',
      errorShapes: { '404': 'envelope' },
    })
    .input(PageInput.extend(ContactId.shape))
    .output(z.object({ success: z.literal(true), appointments: z.array(AppointmentRecord), next_cursor: z.string().nullable() }))
    .query(async ({ ctx, input }) => {
      const { contactId, ...page } = input;
      return { success: true as const, ...(await listAppointments(ctx.em, ctx.services.secrets, ctx.account.id, contactId, page)) };
    }),

  cancel: accountProcedure
    .meta({
      openapi: { method: 'POST', path: '/appointments/{id}/cancel', tags, summary: 'Cancel an appointment (cancelling again changes nothing)' },
      section: 'Appointments',
      access: 'write',
      errorShapes: { '404': 'envelope' },
    })
    .input(z.object({ id: z.string() }))
    .output(AppointmentData)
    .mutation(async ({ ctx, input }) => ({ success: true as const, data: await cancelAppointment(ctx.em, ctx.account.id, input.id) })),
});
