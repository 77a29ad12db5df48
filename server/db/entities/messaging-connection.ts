import { defineEntity, p } from '@mikro-orm/core';
import { Account } from './account.ts';

// An account's messaging-provider credentials. The access token is stored only sealed
// (AES-GCM under SECRET_KEY); provider callbacks find the account by phone number id.
export const MessagingConnectionSchema = defineEntity({
  name: 'MessagingConnection',
  tableName: 'messaging_connections',
  properties: {
    account: () => p.oneToOne(Account).ref().primary().deleteRule('cascade'),
    phoneNumberId: p.text().unique('messaging_connections_phone_number_id_unique'),
    businessAccountId: p.text().nullable(),
    accessTokenSealed: p.text(),
    connectedAt: p.datetime().defaultRaw('now()'),
    updatedAt: p.datetime().defaultRaw('now()').onUpdate(() => new Date()),
  },
});

export class MessagingConnection extends MessagingConnectionSchema.class {}
MessagingConnectionSchema.setClass(MessagingConnection);
