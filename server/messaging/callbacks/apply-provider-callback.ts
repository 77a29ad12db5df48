// Applies every item of a provider callback, each in its own transaction, so one
// item that fails loses none of the others. The answer tells the route whether a
// retry could help; every item is idempotent, so a retry of the whole callback is safe.
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';
import { ApiError } from '../../errors.ts';
import { applyStatusUpdate } from './apply-status-update.ts';
import { findConnectedAccountId } from './find-connected-account.ts';
import type { CallbackChange } from './read-callback-payload.ts';
import { recordInboundMessage } from './record-inbound-message.ts';

export type CallbackResult = {
  applied: number;
  /** Duplicates, unknown messages, steps backwards, numbers no account connected. */
  ignored: number;
  /** Items that will never apply (an invalid phone number): logged, not retried. */
  rejected: number;
  /** Items that failed for a reason a retry may not meet again (the database, say). */
  failed: number;
};

export async function applyProviderCallback(em: EntityManager, log: Logger, changes: CallbackChange[]): Promise<CallbackResult> {
  const result: CallbackResult = { applied: 0, ignored: 0, rejected: 0, failed: 0 };

  const attempt = async (what: string, work: () => Promise<boolean>) => {
    try {
      if (await work()) result.applied += 1;
      else result.ignored += 1;
    } catch (error) {
      if (error instanceof ApiError && error.status < 500) {
        result.rejected += 1;
        log.warn({ err: error }, `provider callback: ${what} refused`);
      } else {
        result.failed += 1;
        log.error({ err: error }, `provider callback: ${what} failed`);
      }
    }
  };

  for (const change of changes) {
    const items = change.messages.length + change.statuses.length;
    let accountId: string | null;
    try {
      accountId = await findConnectedAccountId(em.fork(), change.phoneNumberId);
    } catch (error) {
      result.failed += items;
      log.error({ err: error }, 'provider callback: account lookup failed');
      continue;
    }
    if (!accountId) {
      // Answered 200 all the same: the provider would otherwise retry a number nobody connected for days.
      result.ignored += items;
      log.info({ phoneNumberId: change.phoneNumberId }, 'provider callback for a phone number no account connected; ignored');
      continue;
    }
    // Messages first: a status in the same callback may be about a reply to them.
    for (const message of change.messages) {
      await attempt(`message ${message.providerMessageId}`, async () => (await recordInboundMessage(em.fork(), accountId, message)).recorded);
    }
    for (const status of change.statuses) {
      await attempt(`status ${status.status} of ${status.providerMessageId}`, async () => {
        const outcome = await applyStatusUpdate(em.fork(), accountId, status);
        if (status.status === 'failed' && outcome === 'applied') log.warn({ providerMessageId: status.providerMessageId, errors: status.errors }, 'provider reports a message failed');
        return outcome === 'applied';
      });
    }
  }
  return result;
}
