// POST /contacts checks the lists it names and writes the contact, its list memberships
// and its Contact Created event in ONE statement: a single statement is its own
// transaction, so everything commits together without BEGIN/COMMIT round trips, and no
// entity is loaded. Nothing is written unless every list exists and is the account's.
import type { EntityManager } from '@mikro-orm/postgresql';
import type pg from 'pg';
import { payloadWithUserSql } from '../../events/emit.ts';

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
export type EventRowWithoutUser = { id: string; name: string; payload: Record<string, unknown>; requestId: string | null };

// The `user` block is read from the account in the same statement (see emit.ts for its shape).
const INSERT_CONTACT = `
with wanted as (
  select list_id from json_array_elements_text(?::json) as list_id
), found as (
  select id, account_id from lists where id in (select list_id from wanted)
), allowed as (
  select (select count(*) from found where account_id = ?::text) = (select count(*) from wanted) as ok
), contact as (
  insert into contacts (id, account_id, phone_number, email, first_name, last_name, is_bot_active, do_not_disturb,
                        instagram_id, current_campaign, current_campaign_data, channel, is_chat_window_open,
                        external_id, custom_channel, chat_widget_id)
  select ?::text, ?::text, ?::text, ?::text, ?::text, ?::text, ?::boolean, ?::boolean,
         ?::text, ?::text, ?::jsonb, ?::text, ?::boolean, ?::text, ?::text, ?::text
   where (select ok from allowed)
  returning id, account_id
), memberships as (
  insert into contact_lists (contact_id, list_id, account_id)
  select contact.id, wanted.list_id, contact.account_id from contact, wanted
), event as (
  insert into events (id, account_id, name, payload, request_id)
  select ?, a.id, ?, ${payloadWithUserSql('?::jsonb', 'a')}, ?::text
    from accounts a, contact where a.id = contact.account_id
)
select (select ok from allowed) as ok, coalesce((select json_agg(json_build_object('id', id, 'account_id', account_id)) from found), '[]'::json) as found`;

/** The same statement with numbered parameters, prepared once per pool connection. */
let parameter = 0;
const INSERT_CONTACT_PREPARED = { name: 'insert-contact-with-lists', text: INSERT_CONTACT.replace(/\?/g, () => `$${(parameter += 1)}`) };

/** Written, or not because a list is missing or another account's (the lists that exist and their owners). */
export type InsertContactOutcome = { written: true } | { written: false; lists: { id: string; account_id: string }[] };

/**
 * Runs on `em`'s transaction when it has one; otherwise, given the pool, as a prepared
 * statement there (parsing and planning this statement is a third of its database time).
 */
export async function insertContactWithLists(
  em: EntityManager,
  contact: ContactRow,
  listIds: string[],
  event: EventRowWithoutUser,
  pool?: pg.Pool,
): Promise<InsertContactOutcome> {
  const values = [
    JSON.stringify(listIds),
    contact.accountId,
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
    event.id,
    event.name,
    JSON.stringify(event.payload),
    event.requestId,
  ];
  type Row = { ok: boolean; found: { id: string; account_id: string }[] };
  const [row] =
    pool && !em.isInTransaction()
      ? (await pool.query<Row>({ ...INSERT_CONTACT_PREPARED, values })).rows
      : await em.execute<Row[]>(INSERT_CONTACT, values);
  return row!.ok ? { written: true } : { written: false, lists: row.found };
}
