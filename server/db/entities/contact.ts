import { defineEntity, p } from '@mikro-orm/core';
import { Account } from './account.ts';

export const ContactSchema = defineEntity({
  name: 'Contact',
  tableName: 'contacts',
  properties: {
    id: p.text().primary(),
    account: () => p.manyToOne(Account).ref().deleteRule('cascade').index(false),
    /** E.164; null only for a chat-widget visitor, who is known by widget and visitor id. */
    phoneNumber: p.text().nullable(),
    email: p.text().nullable(),
    firstName: p.text().default('Unknown'),
    lastName: p.text().default('Unknown'),
    isBotActive: p.boolean().default(true),
    doNotDisturb: p.boolean().default(false),
    instagramId: p.text().nullable(),
    currentCampaign: p.text().nullable(),
    currentCampaignData: p.json<Record<string, unknown>>().nullable(),
    channel: p.text().nullable(),
    isChatWindowOpen: p.boolean().default(false),
    /** When the 24-hour customer-service window opened by the last inbound provider message closes. */
    chatWindowExpiresAt: p.datetime().nullable(),
    externalId: p.text().nullable(),
    customChannel: p.text().nullable(),
    chatWidgetId: p.text().nullable(),
    /** The visitor id a chat widget keeps in the browser; with chatWidgetId, the visitor's identity. */
    widgetVisitorId: p.text().nullable(),
    /** True while the bot prepares its turn in this contact's widget conversation. */
    isBotTyping: p.boolean().default(false),
    /** The visitor message whose bot turn ends the bot's typing (the latest one given a turn). */
    botTypingFor: p.text().nullable(),
    /** Until when someone typing through the API shows the visitor the typing indicator (POST /contacts/{id}/typing). */
    botTypingUntil: p.datetime().nullable(),
    /** Set while the contact is archived: out of GET /contacts pages, still found by lookups. */
    archivedAt: p.datetime().nullable(),
    /** The business's read mark: its messages up to this time are read (POST /contacts/{id}/read). */
    businessReadAt: p.datetime().nullable(),
    createdAt: p.datetime().defaultRaw('now()'),
    updatedAt: p.datetime().defaultRaw('now()').onUpdate(() => new Date()),
  },
  uniques: [
    { properties: ['account', 'phoneNumber'], name: 'contacts_account_phone_unique' },
    // One contact per visitor of a widget.
    { properties: ['account', 'chatWidgetId', 'widgetVisitorId'], name: 'contacts_account_id_chat_widget_id_widget_visitor_id_unique' },
  ],
  indexes: [
    { properties: ['account', 'email'], name: 'contacts_account_id_email_index' },
    { properties: ['account', 'id'], name: 'contacts_account_id_id_index' },
    // The window-closing job reads the windows that are due.
    { properties: ['chatWindowExpiresAt'], name: 'contacts_chat_window_expires_at_index' },
    // GET /contacts pages: the unarchived ones by default, the archived ones on request.
    { properties: ['account', 'id'], name: 'contacts_account_id_id_unarchived_index', where: 'archived_at is null' },
    { properties: ['account', 'id'], name: 'contacts_account_id_id_archived_index', where: 'archived_at is not null' },
  ],
});

export class Contact extends ContactSchema.class {}
ContactSchema.setClass(Contact);
