// Closes the customer-service windows whose 24 hours have passed, so contacts'
// isChatWindowOpen says whether a free-form answer may still be sent.
import type { EntityManager } from '@mikro-orm/postgresql';
import { inBatches } from '../../db/in-batches.ts';
import { queryRows, sql } from '../../db/sql.ts';

/** Contacts closed per statement, so a large backlog holds neither many row locks nor one long transaction. */
const BATCH_SIZE = 1000;

/** Returns how many windows were closed. */
export function closeExpiredChatWindows(em: EntityManager, now: Date): Promise<number> {
  return inBatches(BATCH_SIZE, async () => {
    // Rows locked by an inbound message (which may be extending the window) are skipped;
    // the outer condition re-checks the expiry of the rows it does update.
    const at = now.toISOString();
    const rows = await queryRows<{ id: string }>(
      em,
      sql`with due as (
         select id from contacts
          where chat_window_expires_at <= ${at}::timestamptz
          limit ${BATCH_SIZE}
            for update skip locked
       )
       update contacts c
          set is_chat_window_open = false,
              chat_window_expires_at = null,
              updated_at = now()
         from due
        where c.id = due.id and c.chat_window_expires_at <= ${at}::timestamptz
       returning c.id`,
    );
    return rows.length;
  });
}
