// A widget visitor's contact: known by widget and visitor key (the browser's visitor id, or
// `sub:<sub>` for a user the site verified), with no phone number. The
// unique (chat_widget_id, widget_visitor_id) constraint makes two first messages at once
// create one contact: the second insert waits for the first and then finds its row.
import type pg from 'pg';
import { newId } from '../db/ids.ts';
import { newEventRow, payloadWithUserSql } from '../events/emit.ts';
import type { ContactEventBlock } from '../messages/contact-event-data.ts';
import type { VerifiedVisitor } from './visitor-identity.ts';

export const WIDGET_CHANNEL = 'chat_widget';

/** The visitor's contact, locked for the rest of the transaction: what a message's events show of it. */
export type VisitorContact = { block: ContactEventBlock; isBotActive: boolean; created: boolean };

type ContactRow = { id: string; phone_number: string | null; email: string | null; first_name: string; last_name: string; is_bot_active: boolean };
const CONTACT_COLUMNS = 'id, phone_number, email, first_name, last_name, is_bot_active';

const LOCK_VISITOR_CONTACT = {
  name: 'lock-visitor-contact',
  text: `select ${CONTACT_COLUMNS} from contacts where chat_widget_id = $1 and widget_visitor_id = $2 and account_id = $3 for update`,
};

// The new contact and its Contact Created event; a row another transaction inserted first
// makes this insert nothing (after that transaction commits).
const INSERT_VISITOR_CONTACT = {
  name: 'insert-visitor-contact',
  text: `with contact as (
  insert into contacts (id, account_id, phone_number, channel, chat_widget_id, widget_visitor_id, email, first_name, last_name)
  values ($1, $2, null, $3, $4, $5, $10, coalesce($11, 'Unknown'), coalesce($12, 'Unknown'))
  on conflict (chat_widget_id, widget_visitor_id) do nothing
  returning ${CONTACT_COLUMNS}
), event as (
  insert into events (id, account_id, name, payload, request_id)
  select $6, a.id, $7, ${payloadWithUserSql('$8::jsonb', 'a')}, $9::text from accounts a, contact where a.id = $2
)
select ${CONTACT_COLUMNS} from contact`,
};

// A verified user's contact follows what their site says of them now.
const UPDATE_VERIFIED_CONTACT = {
  name: 'update-verified-visitor-contact',
  text: `update contacts set email = coalesce($2, email), first_name = coalesce($3, first_name), last_name = coalesce($4, last_name), updated_at = now()
  where id = $1 returning ${CONTACT_COLUMNS}`,
};

/** The token's name as first and last name: the first word, then the rest. */
function namesOf(name: string | null): [string | null, string | null] {
  if (!name) return [null, null];
  const [first, ...rest] = name.split(/\s+/);
  return [first!, rest.length ? rest.join(' ') : null];
}

function visitorContact(row: ContactRow, created: boolean): VisitorContact {
  const block = { id: row.id, phone_number: row.phone_number, email: row.email, first_name: row.first_name, last_name: row.last_name };
  return { block, isBotActive: row.is_bot_active, created };
}

/**
 * Call inside the transaction of the visitor's message: the contact row stays locked until
 * it ends (as lockContact locks it for every message), and Contact Created commits with it.
 */
export async function findOrCreateVisitorContact(
  client: pg.ClientBase,
  accountId: string,
  widgetId: string,
  visitorId: string,
  verified: VerifiedVisitor | null = null,
): Promise<VisitorContact> {
  const lookup = { ...LOCK_VISITOR_CONTACT, values: [widgetId, visitorId, accountId] };
  const [firstName, lastName] = namesOf(verified?.name ?? null);
  const [known] = (await client.query<ContactRow>(lookup)).rows;
  if (known) {
    const stale =
      (verified?.email && verified.email !== known.email) || (firstName && firstName !== known.first_name) || (lastName && lastName !== known.last_name);
    if (!stale) return visitorContact(known, false);
    const [updated] = (await client.query<ContactRow>({ ...UPDATE_VERIFIED_CONTACT, values: [known.id, verified!.email, firstName, lastName] })).rows;
    return visitorContact(updated!, false);
  }

  const contactId = newId('ct');
  const email = verified?.email ?? null;
  const event = newEventRow('Contact Created', {
    contact: { id: contactId, phone_number: null, email, lists: [], chat_widget_id: widgetId, widget_visitor_id: visitorId },
  });
  const [inserted] = (
    await client.query<ContactRow>({
      ...INSERT_VISITOR_CONTACT,
      values: [contactId, accountId, WIDGET_CHANNEL, widgetId, visitorId, event.id, event.name, JSON.stringify(event.payload), event.requestId, email, firstName, lastName],
    })
  ).rows;
  if (inserted) return visitorContact(inserted, true);
  const [concurrent] = (await client.query<ContactRow>(lookup)).rows;
  if (!concurrent) throw new Error('visitor contact vanished between insert and select');
  return visitorContact(concurrent, false);
}
