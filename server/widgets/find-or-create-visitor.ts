// A widget visitor's contact: known by widget and visitor key (the browser's visitor id, or
// `sub:<sub>` for a user the site verified), with no phone number. The
// unique (account_id, chat_widget_id, widget_visitor_id) index makes two first messages at once
// create one contact: the second insert waits for the first and then finds its row.
import type pg from 'pg';
import { insertContactSql } from '../contacts/sql/insert-contact.ts';
import { newId } from '../db/ids.ts';
import { prepared, queryRows, rawSql, sql } from '../db/sql.ts';
import { eventsOf, insertEventsSql, newEventRow, type EventRow } from '../events/sql/insert-events.ts';
import type { ContactEventBlock } from '../messages/contact-event-data.ts';
import type { VerifiedVisitor } from './visitor-identity.ts';

export const WIDGET_CHANNEL = 'chat_widget';

/**
 * The visitor's contact, locked for the rest of the transaction: what a message's events show
 * of it, and whether it is archived (under the lock, so still true when the message is stored).
 */
export type VisitorContact = {
  block: ContactEventBlock;
  isBotActive: boolean;
  /** The visitor sees the typing indicator: an earlier message's bot turn, or someone typing through the API. */
  typing: boolean;
  archived: boolean;
  created: boolean;
};

/** A row of lockVisitorContact. */
export type ContactRow = {
  id: string;
  phone_number: string | null;
  email: string | null;
  first_name: string;
  last_name: string;
  is_bot_active: boolean;
  typing: boolean;
  archived: boolean;
};
const CONTACT_COLUMNS = rawSql(
  'id, phone_number, email, first_name, last_name, is_bot_active, is_bot_typing or coalesce(bot_typing_until > now(), false) as typing, archived_at is not null as archived',
);
/** The same, read back from a statement's RETURNING. */
const RETURNED_COLUMNS = rawSql('id, phone_number, email, first_name, last_name, is_bot_active, typing, archived');

/** The returning visitor's contact, read with its row lock: the first statement of the message's transaction. */
export const lockVisitorContact = (widgetId: string, visitorId: string, accountId: string) =>
  prepared(
    'lock-visitor-contact',
    sql`select ${CONTACT_COLUMNS} from contacts where chat_widget_id = ${widgetId} and widget_visitor_id = ${visitorId} and account_id = ${accountId} for update`,
  );

// The new contact and its Contact Created event; a row another transaction inserted first
// makes this insert nothing (after that transaction commits).
const insertVisitorContact = (
  contactId: string,
  accountId: string,
  widgetId: string,
  visitorId: string,
  event: EventRow,
  person: { email: string | null; firstName: string | null; lastName: string | null },
) =>
  prepared(
    'insert-visitor-contact',
    sql`with contact as (
  ${insertContactSql(
    {
      id: contactId,
      accountId,
      phoneNumber: null,
      email: person.email,
      firstName: person.firstName ?? 'Unknown',
      lastName: person.lastName ?? 'Unknown',
      isBotActive: true,
      doNotDisturb: false,
      instagramId: null,
      currentCampaign: null,
      currentCampaignData: null,
      channel: WIDGET_CHANNEL,
      isChatWindowOpen: false,
      externalId: null,
      customChannel: null,
      chatWidgetId: widgetId,
      widgetVisitorId: visitorId,
    },
    { skipKnownVisitor: true, returning: CONTACT_COLUMNS },
  )}
), event as (
  ${insertEventsSql(eventsOf(accountId, [event]), { onlyIf: sql`exists (select 1 from contact)` })}
)
select ${RETURNED_COLUMNS} from contact`,
  );

// A verified user's contact follows what their site says of them now.
const updateVerifiedContact = (contactId: string, email: string | null, firstName: string | null, lastName: string | null) =>
  prepared(
    'update-verified-visitor-contact',
    sql`update contacts set email = coalesce(${email}::text, email), first_name = coalesce(${firstName}::text, first_name),
    last_name = coalesce(${lastName}::text, last_name), updated_at = now()
  where id = ${contactId} returning ${CONTACT_COLUMNS}`,
  );

/** The token's name as first and last name: the first word, then the rest. */
function namesOf(name: string | null): [string | null, string | null] {
  if (!name) return [null, null];
  const [first, ...rest] = name.split(/\s+/);
  return [first!, rest.length ? rest.join(' ') : null];
}

function visitorContact(row: ContactRow, created: boolean): VisitorContact {
  const block = { id: row.id, phone_number: row.phone_number, email: row.email, first_name: row.first_name, last_name: row.last_name };
  return { block, isBotActive: row.is_bot_active, typing: row.typing, archived: row.archived, created };
}

/**
 * Call inside the transaction of the visitor's message: the contact row stays locked until
 * it ends (as lockContact locks it for every message), and Contact Created commits with it.
 * `locked`: the rows of lockVisitorContact when the transaction ran it already.
 */
export async function findOrCreateVisitorContact(
  client: pg.ClientBase,
  accountId: string,
  widgetId: string,
  visitorId: string,
  verified: VerifiedVisitor | null = null,
  locked?: ContactRow[],
): Promise<VisitorContact> {
  const [firstName, lastName] = namesOf(verified?.name ?? null);
  const [known] = locked ?? (await queryRows<ContactRow>(client, lockVisitorContact(widgetId, visitorId, accountId)));
  if (known) {
    const stale =
      (verified?.email && verified.email !== known.email) || (firstName && firstName !== known.first_name) || (lastName && lastName !== known.last_name);
    if (!stale) return visitorContact(known, false);
    const [updated] = await queryRows<ContactRow>(client, updateVerifiedContact(known.id, verified!.email ?? null, firstName, lastName));
    return visitorContact(updated!, false);
  }

  const contactId = newId('ct');
  const email = verified?.email ?? null;
  // No visitor id: it is the visitor's credential on the public widget endpoints, and events leave the service.
  const event = newEventRow('Contact Created', { contact: { id: contactId, phone_number: null, email, lists: [], chat_widget_id: widgetId } });
  const [inserted] = await queryRows<ContactRow>(client, insertVisitorContact(contactId, accountId, widgetId, visitorId, event, { email, firstName, lastName }));
  if (inserted) return visitorContact(inserted, true);
  const [concurrent] = await queryRows<ContactRow>(client, lockVisitorContact(widgetId, visitorId, accountId));
  if (!concurrent) throw new Error('visitor contact vanished between insert and select');
  return visitorContact(concurrent, false);
}
