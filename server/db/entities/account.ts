import { defineEntity, p } from '@mikro-orm/core';

export const AccountSchema = defineEntity({
  name: 'Account',
  tableName: 'accounts',
  properties: {
    id: p.text().primary(),
    // Unique among top-level accounts, and among one agency's clients (partial unique indexes in the migrations).
    email: p.text(),
    name: p.text().nullable(),
    plan: p.text().default('pro'),
    isAgency: p.boolean().default(false),
    // The agency that manages this client sub-account; deleting the agency deletes its clients.
    agency: () => p.manyToOne(Account).ref().nullable().deleteRule('cascade').index('accounts_agency_id_index'),
    webhooksEnabled: p.boolean().default(true),
    firstName: p.text().nullable(),
    lastName: p.text().nullable(),
    role: p.text().nullable(),
    isAgencySubAccount: p.boolean().default(false),
    businessName: p.text().nullable(),
    description: p.text().nullable(),
    addressLine: p.text().nullable(),
    city: p.text().nullable(),
    country: p.text().nullable(),
    postalCode: p.text().nullable(),
    state: p.text().nullable(),
    timeZoneId: p.text().nullable(),
    language: p.text().nullable(),
    monthlyCredits: p.integer().default(1000),
    monthlyCreditsUsed: p.integer().default(0),
    credits: p.integer().default(1000).check('credits >= 0'),
    rollOverToNextMonth: p.boolean().default(false),
    lastResetDate: p.datetime().defaultRaw('now()'),
    notifications: p.json<Record<string, unknown>>().nullable(),
    // The identity provider's `sub` of the person who signs in to this account (ID-token sessions).
    oidcSubject: p.text().nullable().unique('accounts_oidc_subject_unique'),
    createdAt: p.datetime().defaultRaw('now()'),
    updatedAt: p.datetime().defaultRaw('now()').onUpdate(() => new Date()),
  },
});

export class Account extends AccountSchema.class {}
AccountSchema.setClass(Account);
