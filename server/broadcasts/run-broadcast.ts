// Runs a broadcast, from any point: the first run writes its recipients and announces
// Broadcast Started; every run then fails what a dead run left claimed, claims batches of
// pending recipients (committed before any send), skips do-not-disturb contacts, sends the
// rest at BROADCAST_RATE_PER_SECOND, and finally announces Broadcast Completed. A session
// advisory lock keeps it to one live run per broadcast; the database drops the lock with
// the connection of a process that dies, which is what lets the next run resume.
import type { EntityManager } from '@mikro-orm/postgresql';
import { setTimeout as sleep } from 'node:timers/promises';
import { Broadcast } from '../db/entities/index.ts';
import { queryRows, runSql, sql } from '../db/sql.ts';
import { ApiError } from '../errors.ts';
import { emit } from '../events/emit.ts';
import { sendTemplate } from '../messaging/send-template.ts';
import type { Services } from '../process-services.ts';
import { claimRecipients, materialiseRecipients } from './claim-recipients.ts';
import { enqueueBroadcastRun } from './enqueue-broadcast-run.ts';
import { failInterruptedRecipients, failPendingRecipients, recordBroadcastSend, recordRecipientOutcomes } from './record-recipient-outcome.ts';

const BATCH_SIZE = 50;
/** When the next run looks in, should this one die; a live run keeps pushing it back. */
const RESUME_AFTER_MS = 5_000;
const PROGRESS_EVERY = 100;
/** Provider calls in flight at once for one broadcast. */
const SENDS_IN_FLIGHT = 16;
/** This many provider outages in a row stop the broadcast instead of failing every recipient slowly. */
const OUTAGE_STOP_AFTER = 5;
/** The advisory-lock class of broadcast runs (the object is the hash of the broadcast id). */
const LOCK_CLASS = 0x6263; // "bc"

export const CREDITS_EXHAUSTED = 'not enough credits';
export const DO_NOT_DISTURB = 'contact is do-not-disturb';

/** `accountId` is absent only from runs queued before runs named their account. */
export async function runBroadcast(services: Services, broadcastId: string, accountId?: string): Promise<void> {
  const log = services.log.child({ task: 'run-broadcast', broadcastId });
  const lockConnection = await services.pool.connect();
  let connectionError: Error | undefined;
  try {
    const [lock] = await queryRows<{ locked: boolean }>(lockConnection, sql`select pg_try_advisory_lock(${LOCK_CLASS}, hashtext(${broadcastId})) as locked`);
    if (!lock?.locked) {
      // Another run is live; look again later in case it dies before finishing.
      const em = services.orm.em.fork();
      const broadcast = await em.findOne(Broadcast, broadcastKey(broadcastId, accountId), { fields: ['status', 'account'] });
      if (broadcast && (broadcast.status === 'queued' || broadcast.status === 'running')) {
        await em.transactional((tx) => enqueueBroadcastRun(tx, broadcast.account.id, broadcastId, new Date(Date.now() + RESUME_AFTER_MS)));
      }
      return;
    }
    try {
      await runLocked(services, broadcastId, accountId, log);
    } finally {
      await runSql(lockConnection, sql`select pg_advisory_unlock(${LOCK_CLASS}, hashtext(${broadcastId}))`);
    }
  } catch (error) {
    connectionError = error as Error;
    throw error;
  } finally {
    // A connection that failed is dropped rather than reused with a lock it may still hold.
    lockConnection.release(connectionError);
  }
}

type RunLog = Services['log'];

/** The broadcast by id, and by its account when the run names it (a single-shard read). */
function broadcastKey(broadcastId: string, accountId: string | undefined) {
  return accountId ? { id: broadcastId, account: accountId } : { id: broadcastId };
}

async function runLocked(services: Services, broadcastId: string, namedAccountId: string | undefined, log: RunLog): Promise<void> {
  const em = services.orm.em.fork();
  const broadcast = await em.findOne(Broadcast, broadcastKey(broadcastId, namedAccountId));
  if (!broadcast || broadcast.status === 'completed' || broadcast.status === 'failed') return;
  const accountId = broadcast.account.id;
  if (broadcast.status === 'queued') await startBroadcast(em.fork(), broadcast, log);

  const interrupted = await failInterruptedRecipients(em.fork(), accountId, broadcastId);
  if (interrupted) log.warn({ interrupted }, 'recipients claimed by a run that died were failed, not sent again');

  const pace = createPacer(services.config.BROADCAST_RATE_PER_SECOND);
  let attempted = 0;
  let outagesInARow = 0;
  let stopReason: string | null = null;
  let fatal: unknown = null;
  const sendsInFlight = Math.max(1, Math.min(SENDS_IN_FLIGHT, services.config.BROADCAST_RATE_PER_SECOND));
  while (!stopReason) {
    const claimed = await em.fork().transactional(async (tx) => {
      const batch = await claimRecipients(tx, accountId, broadcastId, BATCH_SIZE);
      const quiet = batch.filter((recipient) => recipient.doNotDisturb);
      await recordRecipientOutcomes(tx, accountId, broadcastId, quiet.map((recipient) => ({ contactId: recipient.contactId, status: 'skipped' as const, error: DO_NOT_DISTURB })));
      if (batch.length) await enqueueBroadcastRun(tx, accountId, broadcastId, new Date(Date.now() + RESUME_AFTER_MS));
      return batch;
    });
    if (claimed.length === 0) break;

    const sendOne = async (contactId: string) => {
      try {
        await sendTemplate(services, accountId, { contactId, templateId: broadcast.templateId }, {
          broadcastId,
          // The recipient is marked sent with the message, so its outcome cannot be lost.
          recordWithMessage: (tx, sent) => recordBroadcastSend(tx, accountId, broadcastId, contactId, sent.messageId, sent.providerMessageId),
        });
        outagesInARow = 0;
      } catch (error) {
        // Anything else (the database) fails the run; the recipient stays claimed and the
        // next run fails it as interrupted, since its message may have gone out.
        if (!(error instanceof ApiError)) throw error;
        const reason = error.status === 402 ? CREDITS_EXHAUSTED : error.message;
        await recordRecipientOutcomes(em.fork(), accountId, broadcastId, [{ contactId, status: 'failed', error: reason }]);
        outagesInARow = error.reason === 'provider_unavailable' ? outagesInARow + 1 : 0;
        if (stopsBroadcast(error) || outagesInARow >= OUTAGE_STOP_AFTER) stopReason ??= reason;
      }
      attempted += 1;
      if (attempted % PROGRESS_EVERY === 0) log.info({ attempted }, 'broadcast progress');
    };
    // Several sends in flight, paced at their start, so the provider's answer time does not
    // cap the rate below BROADCAST_RATE_PER_SECOND.
    const inFlight = new Set<Promise<void>>();
    for (const recipient of claimed) {
      if (recipient.doNotDisturb) continue;
      // A failed run leaves the rest claimed; the next run fails them as interrupted.
      if (fatal) break;
      if (stopReason) {
        await recordRecipientOutcomes(em.fork(), accountId, broadcastId, [{ contactId: recipient.contactId, status: 'failed', error: stopReason }]);
        continue;
      }
      await pace();
      const send: Promise<void> = sendOne(recipient.contactId)
        .catch((error: unknown) => {
          fatal ??= error;
        })
        .finally(() => inFlight.delete(send));
      inFlight.add(send);
      if (inFlight.size >= sendsInFlight) await Promise.race(inFlight);
    }
    await Promise.all(inFlight);
    if (fatal) throw fatal;
  }
  if (stopReason) {
    const failed = await failPendingRecipients(em.fork(), accountId, broadcastId, stopReason);
    log.warn({ reason: stopReason, failed }, 'broadcast stopped early; the recipients not yet tried were failed');
  }
  await completeBroadcast(em.fork(), broadcast, stopReason, log);
}

/**
 * Failures that every later send would repeat: credits ran out, the credentials or the
 * template went away. The broadcast stops rather than failing each recipient in turn;
 * sending the rest later would surprise an account that topped up for something else.
 */
function stopsBroadcast(error: ApiError): boolean {
  return error.status === 402 || error.status === 403 || ['template_not_found', 'template_not_approved', 'invalid_template'].includes(error.reason ?? '');
}

/** queued → running, once: the transition guards the recipients' writing and the event. */
async function startBroadcast(em: EntityManager, broadcast: Broadcast, log: RunLog): Promise<void> {
  await em.transactional(async (tx) => {
    const started = await queryRows<{ id: string }>(
      tx,
      sql`update broadcasts set status = 'running', started_at = now(), updated_at = now()
          where account_id = ${broadcast.account.id} and id = ${broadcast.id} and status = 'queued' returning id`,
    );
    if (started.length === 0) return;
    const total = await materialiseRecipients(tx, broadcast.account.id, broadcast.id, broadcast.listId);
    await emit(tx, broadcast.account.id, 'Broadcast Started', {
      broadcast_id: broadcast.id,
      list_id: broadcast.listId,
      whatsapp_template_id: broadcast.templateId,
      total,
    });
    log.info({ total }, 'broadcast started');
  });
}

/**
 * running → completed, once, with the counters as they stand. A broadcast that failed some
 * recipients says so in `error`, with the first failure's reason, so `failed: 1` never comes
 * with `error: null`; one stopped early says why it stopped.
 */
async function completeBroadcast(em: EntityManager, broadcast: Broadcast, stopReason: string | null, log: RunLog): Promise<void> {
  await em.transactional(async (tx) => {
    const error = stopReason ? `stopped early: ${stopReason}` : null;
    const rows = await queryRows<{ total: number; sent: number; failed: number; skipped: number }>(
      tx,
      sql`update broadcasts
          set status = 'completed', completed_at = now(), updated_at = now(),
              error = coalesce(${error}::text, error, case when failed > 0 then format('%s recipient%s failed: %s', failed, case when failed = 1 then '' else 's' end,
                coalesce((select r.error from broadcast_recipients r
                           where r.account_id = broadcasts.account_id and r.broadcast_id = broadcasts.id and r.status = 'failed'
                           order by r.finished_at, r.contact_id limit 1), 'no reason recorded')) end)
        where account_id = ${broadcast.account.id} and id = ${broadcast.id} and status = 'running'
        returning total, sent, failed, skipped`,
    );
    const row = rows[0];
    if (!row) return;
    const counts = { total: Number(row.total), sent: Number(row.sent), failed: Number(row.failed), skipped: Number(row.skipped) };
    await emit(tx, broadcast.account.id, 'Broadcast Completed', { broadcast_id: broadcast.id, ...counts });
    log.info(counts, 'broadcast completed');
  });
}

/** Waits so that calls are at least 1/perSecond apart on average. */
function createPacer(perSecond: number): () => Promise<void> {
  const interval = 1000 / perSecond;
  let next = 0;
  return async () => {
    const now = Date.now();
    const at = Math.max(next, now);
    if (at > now) await sleep(at - now);
    next = at + interval;
  };
}
