// POST /chat-widgets/{configId}/identity-secret: a new secret for signing visitor identity
// tokens (server/widgets/visitor-identity.ts), answered once and stored only sealed; it
// replaces the one before, so tokens signed with that one stop verifying, on open sockets
// too (the announcement below).
import { randomBytes } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { flushOwned } from '../db/update-owned.ts';
import type { Secrets } from '../secrets.ts';
import { IDENTITY_SECRET_PREFIX } from './visitor-identity.ts';
import { announceWidgetChange } from './widget-changes.ts';
import { requireOwnWidget } from './widget-record.ts';

export async function rotateIdentitySecret(em: EntityManager, secrets: Secrets, accountId: string, widgetId: string): Promise<{ identity_secret: string }> {
  return em.transactional(async (tx) => {
    const widget = await requireOwnWidget(tx, accountId, widgetId);
    const secret = `${IDENTITY_SECRET_PREFIX}${randomBytes(32).toString('base64url')}`;
    widget.identitySecretSealed = secrets.seal(secret);
    await flushOwned(tx, widget);
    await announceWidgetChange(tx, widgetId);
    return { identity_secret: secret };
  });
}
