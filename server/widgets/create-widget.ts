// POST /chat-widgets: a widget with its own one-time-code secret, stored only sealed.
import type { EntityManager } from '@mikro-orm/postgresql';
import { generateSecret } from 'otplib';
import { ChatWidget } from '../db/entities/index.ts';
import { newId } from '../db/ids.ts';
import type { Secrets } from '../secrets.ts';
import { toWidgetRecord, WIDGET_ID_PREFIX, type ChatWidgetRecord } from './widget-record.ts';
import type { ChatWidgetCreateInput } from './widget-settings.ts';

export async function createWidget(em: EntityManager, secrets: Secrets, accountId: string, input: ChatWidgetCreateInput): Promise<ChatWidgetRecord> {
  const now = new Date();
  const widget = em.create(ChatWidget, {
    id: newId(WIDGET_ID_PREFIX),
    account: accountId,
    name: input.name,
    settings: input.settings ?? {},
    // Base32, 20 bytes: what RFC 6238 authenticators expect.
    otpSecretSealed: secrets.seal(generateSecret({ length: 20 })),
    createdAt: now,
    updatedAt: now,
  });
  await em.persist(widget).flush();
  return toWidgetRecord(widget);
}
