// A widget visitor's contact: known by widget and visitor id, with no phone number. The
// unique (chat_widget_id, widget_visitor_id) constraint makes two first messages at once
// create one contact: the second insert waits for the first and then finds its row.
import type { EntityManager } from '@mikro-orm/postgresql';
import { newId } from '../db/ids.ts';
import { emit } from '../events/emit.ts';

export const WIDGET_CHANNEL = 'chat_widget';

export type VisitorContact = { contactId: string; created: boolean };

/** Call inside the transaction of the visitor's message, so Contact Created commits with it. */
export async function findOrCreateVisitorContact(em: EntityManager, accountId: string, widgetId: string, visitorId: string): Promise<VisitorContact> {
  const contactId = newId('ct');
  const inserted = await em.execute<{ id: string }[]>(
    `insert into contacts (id, account_id, phone_number, channel, chat_widget_id, widget_visitor_id)
     values (?, ?, null, ?, ?, ?)
     on conflict (chat_widget_id, widget_visitor_id) do nothing
     returning id`,
    [contactId, accountId, WIDGET_CHANNEL, widgetId, visitorId],
  );
  if (inserted.length) {
    await emit(em, accountId, 'Contact Created', {
      contact: { id: contactId, phone_number: null, email: null, lists: [], chat_widget_id: widgetId, widget_visitor_id: visitorId },
    });
    return { contactId, created: true };
  }
  const [existing] = await em.execute<{ id: string }[]>(
    'select id from contacts where chat_widget_id = ? and widget_visitor_id = ? and account_id = ?',
    [widgetId, visitorId, accountId],
  );
  if (!existing) throw new Error('visitor contact vanished between insert and select');
  return { contactId: existing.id, created: false };
}
