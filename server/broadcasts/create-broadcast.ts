// POST /broadcasts: checks what every send will need (the list, an approved template,
// provider credentials), then stores the broadcast and queues its run together.
import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { Broadcast } from '../db/entities/index.ts';
import { newId } from '../db/ids.ts';
import { requireOwnList } from '../lists/list-access.ts';
import { requireProviderCredentials } from '../messaging/connection.ts';
import { requireSendableTemplate } from '../messaging/send-template.ts';
import type { Secrets } from '../secrets.ts';
import { toBroadcastRecord, type BroadcastRecord } from './broadcast-record.ts';
import { enqueueBroadcastRun } from './enqueue-broadcast-run.ts';

export const BroadcastCreateInput = z.object({
  listId: z.string().min(1, 'must not be empty'),
  whatsappTemplateId: z.string().min(1, 'must not be empty'),
});
export type BroadcastCreateInput = z.infer<typeof BroadcastCreateInput>;

export async function createBroadcast(em: EntityManager, secrets: Secrets, accountId: string, input: BroadcastCreateInput): Promise<BroadcastRecord> {
  await requireOwnList(em, accountId, input.listId);
  const template = await requireSendableTemplate(em, accountId, input.whatsappTemplateId);
  await requireProviderCredentials(em, secrets, accountId);
  return em.transactional(async (tx) => {
    const broadcast = tx.create(Broadcast, {
      id: newId('bc'),
      account: accountId,
      listId: input.listId,
      templateId: template.id,
      status: 'queued',
      total: 0,
      sent: 0,
      failed: 0,
      skipped: 0,
      error: null,
      createdAt: new Date(),
      startedAt: null,
      completedAt: null,
    });
    await tx.persist(broadcast).flush();
    await enqueueBroadcastRun(tx, accountId, broadcast.id);
    return toBroadcastRecord(broadcast);
  });
}
