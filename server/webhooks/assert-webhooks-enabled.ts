// "These require webhooks to be enabled for the account (otherwise 403)."
import type { EntityManager } from '@mikro-orm/postgresql';
import { Account } from '../db/entities/index.ts';
import { ForbiddenError, NotFoundError } from '../errors.ts';

export async function assertWebhooksEnabled(em: EntityManager, accountId: string): Promise<void> {
  const account = await em.findOne(Account, accountId, { fields: ['webhooksEnabled'] });
  if (!account) throw new NotFoundError('Account not found');
  if (!account.webhooksEnabled) throw new ForbiddenError('Webhooks are not enabled for this account', { reason: 'webhooks_disabled' });
}
