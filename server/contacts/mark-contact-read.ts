// POST /contacts/{contactId}/read: the business has read the conversation up to now. The read
// mark is the time of the contact's newest message, read under the contact's row lock (which
// every message's writer holds), so a message being written meanwhile is either in the mark or
// after it, whatever the clocks of the processes that stamped them; messages from the contact
// after the mark are the recent sessions' `unread_count`. The mark never moves back.
import type { EntityManager } from '@mikro-orm/postgresql';
import { queryRows, sql } from '../db/sql.ts';
import { NotFoundError } from '../errors.ts';

export type ReadState = { contactId: string; unread_count: 0 };

export async function markContactRead(em: EntityManager, accountId: string, contactId: string): Promise<ReadState> {
  return em.transactional(async (tx) => {
    // Locked first: the update's read of the newest message then sees every message committed before the lock.
    const locked = await queryRows(tx, sql`select id from contacts where id = ${contactId} and account_id = ${accountId} for update`);
    if (locked.length === 0) throw new NotFoundError('Contact not found');
    await queryRows(
      tx,
      sql`update contacts set business_read_at = greatest(business_read_at,
            (select max(m.created_at) from messages m where m.contact_id = ${contactId} and m.account_id = ${accountId}))
           where id = ${contactId} and account_id = ${accountId}`,
    );
    return { contactId, unread_count: 0 as const };
  });
}
