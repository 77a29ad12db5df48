// A widget visitor's typing, as the page reports it on its socket, announced on the account's
// conversation feed (kind `visitor-typing`) so the account's live subscription, and the agent
// console, can show it. A page reports at most every few seconds while the visitor types and
// once when they pause; the server keeps its own pace per socket, so a page that reports
// faster costs no more than one announcement per interval. A visitor with no contact yet
// (nothing sent so far) is nobody the account can see: nothing is announced.
import type pg from 'pg';
import type { Logger } from 'pino';
import { prepared, queryRows, runSql, sql } from '../db/sql.ts';
import { notifyConversationSql } from './publish-conversation-events.ts';

/**
 * At most one "is typing" announcement per socket in this time (and a "stopped" after it);
 * a listener renews its indicator with each and lets it lapse after a few intervals without one.
 */
export const VISITOR_TYPING_INTERVAL_MS = 2000;
/** A start after a stop: at most one per socket in this time. */
export const VISITOR_TYPING_RESTART_MS = 1000;

export type VisitorTyping = {
  /** What the page said: typing now, or stopped. */
  report(typing: boolean): void;
  /** The socket closed: a visitor announced as typing is announced as stopped. */
  end(): void;
};

type Visitor = { accountId: string; widgetId: string; visitorId: string };

export function createVisitorTyping(pool: pg.Pool, log: Logger, visitor: Visitor, now: () => number = Date.now): VisitorTyping {
  let contactId: string | null = null;
  let announcedTyping = false;
  // When "typing" was last announced (or tried): whatever the page sends, at most once per interval.
  let typingAt = Number.NEGATIVE_INFINITY;
  // Announcements go one after another, so "stopped" never overtakes "typing".
  let queue: Promise<void> = Promise.resolve();

  const announce = (isVisitorTyping: boolean) => {
    announcedTyping = isVisitorTyping;
    if (isVisitorTyping) typingAt = now();
    queue = queue
      .then(async () => {
        contactId ??= await findContact(pool, visitor);
        if (!contactId) {
          // Not known yet; a later report may find the contact once the first message is stored.
          announcedTyping = false;
          return;
        }
        const event = { ...visitor, contactId, kind: 'visitor-typing' as const, isVisitorTyping };
        await runSql(pool, sql`select ${notifyConversationSql([event])}`);
      })
      .catch((error: unknown) => log.warn({ err: error }, 'announcing visitor typing failed'));
  };

  return {
    report(typing) {
      if (typing) {
        // A renewal waits the interval; a new start after a stop waits less, so a visitor who
        // sends and writes on is shown at once, yet a page flipping on and off stays paced.
        const wait = announcedTyping ? VISITOR_TYPING_INTERVAL_MS : VISITOR_TYPING_RESTART_MS;
        if (now() - typingAt >= wait) announce(true);
      } else if (announcedTyping) {
        announce(false);
      }
    },
    end() {
      if (announcedTyping) announce(false);
    },
  };
}

async function findContact(pool: pg.Pool, visitor: Visitor): Promise<string | null> {
  const [row] = await queryRows<{ id: string }>(
    pool,
    prepared(
      'visitor-typing-contact',
      sql`select id from contacts
       where chat_widget_id = ${visitor.widgetId} and widget_visitor_id = ${visitor.visitorId} and account_id = ${visitor.accountId}`,
    ),
  );
  return row?.id ?? null;
}
