// DELETE /chat-widgets/{configId}: its configuration, pages and inbound endpoint answer
// 404 from then on; the visitors' contacts and their conversations stay. Its visitors' open
// sockets are closed (the announcement below) and replies to them are pushed nowhere.
import type { EntityManager } from '@mikro-orm/postgresql';
import { ChatWidget } from '../db/entities/index.ts';
import { NotFoundError } from '../errors.ts';
import { announceWidgetChange } from './widget-changes.ts';

export async function deleteWidget(em: EntityManager, accountId: string, widgetId: string): Promise<void> {
  await em.transactional(async (tx) => {
    const deleted = await tx.nativeDelete(ChatWidget, { id: widgetId, account: accountId });
    if (deleted === 0) throw new NotFoundError('Chat widget not found');
    await announceWidgetChange(tx, widgetId);
  });
}
