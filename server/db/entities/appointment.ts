import { defineEntity, p } from '@mikro-orm/core';
import { Account } from './account.ts';
import { Contact } from './contact.ts';

export const APPOINTMENT_STATUSES = ['booked', 'cancelled'] as const;

export const AppointmentSchema = defineEntity({
  name: 'Appointment',
  tableName: 'appointments',
  properties: {
    id: p.text().primary(),
    account: () => p.manyToOne(Account).ref().deleteRule('cascade').index(false),
    contact: () => p.manyToOne(Contact).ref().deleteRule('cascade').index(false),
    startsAt: p.datetime(),
    endsAt: p.datetime().nullable(),
    title: p.text(),
    notes: p.text().nullable(),
    status: p.enum(APPOINTMENT_STATUSES).default('booked'),
    createdAt: p.datetime().defaultRaw('now()'),
    cancelledAt: p.datetime().nullable(),
  },
  indexes: [
    // A contact's appointments are paged by id within the account.
    { properties: ['account', 'contact', 'id'], name: 'appointments_account_id_contact_id_id_index' },
  ],
});

export class Appointment extends AppointmentSchema.class {}
AppointmentSchema.setClass(Appointment);
