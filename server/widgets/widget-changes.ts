// Announcing that a chat widget's rules for its visitors changed (deleted, identity secret
// replaced, settings replaced), so that every API process checks the visitor sockets it
// holds for that widget again (server/http/widget-gateway.ts). As with credential changes
// (server/auth/credential-changes.ts), the announcement is a notification (notifySql) in
// the transaction of the change, heard on each process's one LISTEN connection: delivered
// when, and only if, the change commits. This is the one module that knows the channel.
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';
import { runSql, sql } from '../db/sql.ts';
import { notifySql } from '../realtime/publish-conversation-events.ts';
import type { WidgetChangeFeed, WidgetChangeListener } from '../process-services.ts';

export const WIDGET_CHANGES_CHANNEL = 'chat_widget_changes';

/** Announces, on the caller's transaction, that the widget's rules for its visitors changed. */
export async function announceWidgetChange(em: EntityManager, widgetId: string): Promise<void> {
  await runSql(em, sql`select ${notifySql(WIDGET_CHANGES_CHANNEL, widgetId)}`);
}

export function createWidgetChangeFeed(log: Logger): WidgetChangeFeed {
  const listeners = new Set<WidgetChangeListener>();
  const call = (widgetId: string | null) => {
    for (const listener of [...listeners]) {
      try {
        listener(widgetId);
      } catch (error) {
        log.error({ err: error }, 'widget change listener failed');
      }
    }
  };
  return {
    subscribe(listener) {
      listeners.add(listener);
      return () => {
        listeners.delete(listener);
      };
    },
    receive(payload) {
      if (payload) call(payload);
    },
    reconnected() {
      call(null);
    },
  };
}
