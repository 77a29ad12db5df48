// POST /contacts writes the contact, its list memberships and its Contact Created
// event in ONE statement: a single statement is its own transaction, so the three
// commit together without BEGIN/COMMIT round trips, and no entity is loaded.
import type { EntityManager } from '@mikro-orm/postgresql';

export type ContactRow = {
  id: string;
  accountId: string;
  phoneNumber: string;
  email: string | null;
  firstName: string;
  lastName: string;
  isBotActive: boolean;
  doNotDisturb: boolean;
  instagramId: string | null;
  currentCampaign: string | null;
  currentCampaignData: Record<string, unknown> | null;
  channel: string | null;
  isChatWindowOpen: boolean;
  externalId: string | null;
  customChannel: string | null;
  chatWidgetId: string | null;
};

/** The event row to write beside the change; `payload` lacks the `user` block, filled from the account row. */
export type EventRowWithoutUser = { id: string; name: string; payload: Record<string, unknown> };

// The `user` block is read from the account in the same statement (see emit.ts for its shape).
const INSERT_CONTACT = `
with contact as (
  insert into contacts (id, account_id, phone_number, email, first_name, last_name, is_bot_active, do_not_disturb,
                        instagram_id, current_campaign, current_campaign_data, channel, is_chat_window_open,
                        external_id, custom_channel, chat_widget_id)
  values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?::jsonb, ?, ?, ?, ?, ?)
  returning id, account_id
), memberships as (
  insert into contact_lists (contact_id, list_id, account_id)
  select contact.id, list_id, contact.account_id from contact, json_array_elements_text(?::json) as list_id
)
insert into events (id, account_id, name, payload)
select ?, a.id, ?, ?::jsonb || jsonb_build_object('user', jsonb_build_object('id', a.id, 'email', a.email, 'name', a.name))
  from accounts a, contact where a.id = contact.account_id`;

export async function insertContactWithLists(em: EntityManager, contact: ContactRow, listIds: string[], event: EventRowWithoutUser): Promise<void> {
  // em.execute: on the caller's transaction when there is one.
  await em.execute(INSERT_CONTACT, [
    contact.id,
    contact.accountId,
    contact.phoneNumber,
    contact.email,
    contact.firstName,
    contact.lastName,
    contact.isBotActive,
    contact.doNotDisturb,
    contact.instagramId,
    contact.currentCampaign,
    contact.currentCampaignData === null ? null : JSON.stringify(contact.currentCampaignData),
    contact.channel,
    contact.isChatWindowOpen,
    contact.externalId,
    contact.customChannel,
    contact.chatWidgetId,
    JSON.stringify(listIds),
    event.id,
    event.name,
    JSON.stringify(event.payload),
  ]);
}
