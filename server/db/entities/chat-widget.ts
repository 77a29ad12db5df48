import { defineEntity, p } from '@mikro-orm/core';
import { Account } from './account.ts';

// A website chat widget: its public id is the `configId` a site embeds. The one-time-code
// and identity secrets are stored only sealed (AES-GCM under SECRET_KEY).
export const ChatWidgetSchema = defineEntity({
  name: 'ChatWidget',
  tableName: 'chat_widgets',
  properties: {
    id: p.text().primary(),
    account: () => p.manyToOne(Account).ref().deleteRule('cascade').index(false),
    name: p.text(),
    /** Colours, greeting, position, away message, allowed origins... as the owner set them. */
    settings: p.json<Record<string, unknown>>(),
    otpSecretSealed: p.text(),
    /** The secret a site signs visitor identity tokens with (`wis_…`), sealed; null until the owner asks for one. */
    identitySecretSealed: p.text().nullable(),
    createdAt: p.datetime().defaultRaw('now()'),
    updatedAt: p.datetime().defaultRaw('now()').onUpdate(() => new Date()),
  },
  indexes: [{ properties: ['account', 'createdAt'], name: 'chat_widgets_account_id_created_at_index' }],
});

export class ChatWidget extends ChatWidgetSchema.class {}
ChatWidgetSchema.setClass(ChatWidget);
