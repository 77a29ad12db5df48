// DELETE /chat-widgets/{configId}: its configuration, pages and inbound endpoint answer
// 404 from then on; the visitors' contacts and their conversations stay.
import type { EntityManager } from '@mikro-orm/postgresql';
import { ChatWidget } from '../db/entities/index.ts';
import { NotFoundError } from '../errors.ts';

export async function deleteWidget(em: EntityManager, accountId: string, widgetId: string): Promise<void> {
  const deleted = await em.nativeDelete(ChatWidget, { id: widgetId, account: accountId });
  if (deleted === 0) throw new NotFoundError('Chat widget not found');
}
