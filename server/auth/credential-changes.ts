// Announcing that what an account's credentials may do has changed (a key revoked, rotated,
// re-scoped or re-dated; the account's plan or features changed), so that live subscriptions
// of that account, and the credentials each API process holds in memory (credential-cache.ts),
// are checked again at once. The announcement raises the account's keys' credential_version
// and notifies (notifySql), in the transaction of the change: PostgreSQL delivers it when, and
// only if, the change commits. This is the one module that knows the channel and the one
// writer of credential_version.
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';
import { runSql, sql } from '../db/sql.ts';
import { notifySql } from '../realtime/publish-conversation-events.ts';
import type { CredentialChangeFeed, CredentialChangeListener } from '../process-services.ts';
import type { AlsoHeard } from '../realtime/conversation-event-feed.ts';
import type { CredentialCache } from './credential-cache.ts';

export const CREDENTIAL_CHANGES_CHANNEL = 'credential_changes';

/**
 * Announces, on the caller's transaction, that the account's credentials or features changed:
 * a key held in memory anywhere no longer passes its check by version (even where the
 * notification is missed), and every process drops what it holds of the account.
 */
export async function announceCredentialChange(em: EntityManager, accountId: string): Promise<void> {
  await runSql(
    em,
    sql`with raised as (update api_keys set credential_version = credential_version + 1 where account_id = ${accountId})
select ${notifySql(CREDENTIAL_CHANGES_CHANNEL, accountId)}`,
  );
}

export function createCredentialChangeFeed(log: Logger): CredentialChangeFeed {
  const byAccount = new Map<string, Set<CredentialChangeListener>>();
  const call = (listener: CredentialChangeListener, accountId: string | null) => {
    try {
      listener(accountId);
    } catch (error) {
      log.error({ err: error }, 'credential change listener failed');
    }
  };
  return {
    watch(accountIds, listener) {
      const ids = [...new Set(accountIds)];
      for (const id of ids) {
        let listeners = byAccount.get(id);
        if (!listeners) byAccount.set(id, (listeners = new Set()));
        listeners.add(listener);
      }
      return () => {
        for (const id of ids) {
          const listeners = byAccount.get(id);
          listeners?.delete(listener);
          if (listeners?.size === 0) byAccount.delete(id);
        }
      };
    },
    receive(payload) {
      if (!payload) return;
      for (const listener of [...(byAccount.get(payload) ?? [])]) call(listener, payload);
    },
    reconnected() {
      const everyone = new Set([...byAccount.values()].flatMap((listeners) => [...listeners]));
      for (const listener of everyone) call(listener, null);
    },
  };
}

/**
 * What the LISTEN connection hears on the channel goes to the cache first (the account's
 * entries go, so the subscriptions' checks that follow read the database), then to the feed's
 * listeners; the cache is in use only while the channel is heard.
 */
export function hearCredentialChanges(feed: CredentialChangeFeed, cache: CredentialCache): AlsoHeard {
  return {
    channel: CREDENTIAL_CHANGES_CHANNEL,
    receive(payload) {
      if (payload) cache.forgetAccount(payload);
      feed.receive(payload);
    },
    reconnected: feed.reconnected,
    listening: (hearing) => cache.listening(hearing),
  };
}
