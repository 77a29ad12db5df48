// Asking for a template sync: on connect, on demand (POST /whatsapp-templates/sync) and
// daily for every connection. Always a job, so a slow provider never holds a request.
import type { EntityManager } from '@mikro-orm/postgresql';
import { MessagingConnection } from '../db/entities/index.ts';
import { enqueueJob } from '../jobs.ts';
import { missingCredentialsError } from './provider-credentials.ts';

export const SYNC_TEMPLATES_TASK = 'sync-templates';

/** One pending sync per account: asking again while one waits does not add a second. */
export async function requestTemplateSync(em: EntityManager, accountId: string): Promise<void> {
  await enqueueJob(em, SYNC_TEMPLATES_TASK, { accountId }, { jobKey: `${SYNC_TEMPLATES_TASK}:${accountId}`, maxAttempts: 5 });
}

/** POST /whatsapp-templates/sync: 403 without a connection, like a send. */
export async function requestTemplateSyncOnDemand(em: EntityManager, accountId: string): Promise<void> {
  const connection = await em.findOne(MessagingConnection, { account: accountId }, { fields: ['account'] });
  if (!connection) throw missingCredentialsError();
  await requestTemplateSync(em, accountId);
}

/** The daily run: one job per connected account, so one failing account does not stop the rest. */
export async function requestTemplateSyncForEveryConnection(em: EntityManager): Promise<number> {
  const connections = await em.find(MessagingConnection, {}, { fields: ['account'] });
  await em.transactional(async (tx) => {
    for (const connection of connections) await requestTemplateSync(tx, connection.account.id);
  });
  return connections.length;
}

