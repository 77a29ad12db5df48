// Which account a provider callback is about: the one whose connection holds the
// business phone number the callback names.
import type { EntityManager } from '@mikro-orm/postgresql';
import { MessagingConnection } from '../../db/entities/index.ts';

/** The account connected with this provider phone number id; null when no account is. */
export async function findConnectedAccountId(em: EntityManager, phoneNumberId: string): Promise<string | null> {
  const connection = await em.findOne(MessagingConnection, { phoneNumberId }, { fields: ['account'] });
  return connection ? connection.account.id : null;
}
