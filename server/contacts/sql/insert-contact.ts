// The one writer of new contacts (insertContactSql), composed into the statement of the change
// that creates one: POST /contacts here, a widget visitor's first message
// (widgets/find-or-create-visitor.ts). POST /contacts checks the lists it names and writes the
// contact, its list memberships and its Contact Created event in ONE statement: a single
// statement is its own transaction, so everything commits together without BEGIN/COMMIT round
// trips, and no entity is loaded. Nothing is written unless every list exists and is the account's.
import type { EntityManager } from '@mikro-orm/postgresql';
import type pg from 'pg';
import { prepared, queryRows, sql, type Sql } from '../../db/sql.ts';
import { eventsOf, insertEventsSql, type EventRow } from '../../events/sql/insert-events.ts';

export type ContactRow = {
  id: string;
  accountId: string;
  /** Null only for a chat-widget visitor, known by widget and visitor id. */
  phoneNumber: string | null;
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
  /** With chatWidgetId, a widget visitor's identity. */
  widgetVisitorId?: string | null;
};

/**
 * The insert of a new contact, to compose as a CTE of the caller's statement. `onlyIf`: a
 * boolean condition (over sibling CTEs, say) without which nothing is inserted.
 * `skipKnownVisitor`: a widget visitor's contact another transaction inserted first makes it
 * insert nothing (after that transaction commits). `returning`: the columns it returns.
 */
export function insertContactSql(contact: ContactRow, options: { onlyIf?: Sql; skipKnownVisitor?: boolean; returning: Sql }): Sql {
  const conflict = options.skipKnownVisitor ? sql`\n  on conflict (account_id, chat_widget_id, widget_visitor_id) do nothing` : sql``;
  return sql`insert into contacts (id, account_id, phone_number, email, first_name, last_name, is_bot_active, do_not_disturb,
                        instagram_id, current_campaign, current_campaign_data, channel, is_chat_window_open,
                        external_id, custom_channel, chat_widget_id, widget_visitor_id)
  select ${contact.id}::text, ${contact.accountId}::text, ${contact.phoneNumber}::text, ${contact.email}::text,
         ${contact.firstName}::text, ${contact.lastName}::text, ${contact.isBotActive}::boolean, ${contact.doNotDisturb}::boolean,
         ${contact.instagramId}::text, ${contact.currentCampaign}::text,
         ${contact.currentCampaignData === null ? null : JSON.stringify(contact.currentCampaignData)}::jsonb,
         ${contact.channel}::text, ${contact.isChatWindowOpen}::boolean, ${contact.externalId}::text,
         ${contact.customChannel}::text, ${contact.chatWidgetId}::text, ${contact.widgetVisitorId ?? null}::text
   where ${options.onlyIf ?? sql`true`}${conflict}
  returning ${options.returning}`;
}

/** The statement, exported for the plan's test. */
export function insertContactStatement(contact: ContactRow, listIds: string[], event: EventRow) {
  // The lists are read by primary key from an array: a semi-join with `wanted` (a set
  // estimated at 100 rows) has the planner hash a scan of every list of every account. The
  // array is built in the statement, not sent: a parameter's array lets each execution's
  // custom plan beat the generic one, and the statement is planned every time.
  return sql`
with wanted as (
  select list_id from json_array_elements_text(${JSON.stringify(listIds)}::json) as list_id
), found as (
  select id, account_id from lists where id = any(array(select list_id from wanted))
), allowed as (
  select (select count(*) from found where account_id = ${contact.accountId}::text) = (select count(*) from wanted) as ok
), contact as (
  ${insertContactSql(contact, { onlyIf: sql`(select ok from allowed)`, returning: sql`id, account_id` })}
), memberships as (
  insert into contact_lists (contact_id, list_id, account_id)
  select contact.id, wanted.list_id, contact.account_id from contact, wanted
), event as (
  ${insertEventsSql(eventsOf(contact.accountId, [event]), { onlyIf: sql`exists (select 1 from contact)` })}
)
select (select ok from allowed) as ok, coalesce((select json_agg(json_build_object('id', id, 'account_id', account_id)) from found), '[]'::json) as found`;
}

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
  event: EventRow,
  pool?: pg.Pool,
): Promise<InsertContactOutcome> {
  const statement = insertContactStatement(contact, listIds, event);
  type Row = { ok: boolean; found: { id: string; account_id: string }[] };
  const [row] = pool && !em.isInTransaction() ? await queryRows<Row>(pool, prepared('insert-contact-with-lists', statement)) : await queryRows<Row>(em, statement);
  return row!.ok ? { written: true } : { written: false, lists: row.found };
}
