// Template sync (the `sync-templates` job): the provider's listing of the account's
// templates, upserted by (account, name, language).
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';
import { MessageTemplate } from '../db/entities/index.ts';
import { newId } from '../db/ids.ts';
import { runSql, sql } from '../db/sql.ts';
import type { Secrets } from '../secrets.ts';
import { loadProviderCredentials } from './provider-credentials.ts';
import type { MessagingProvider, ProviderTemplate } from './provider.ts';
import { ProviderRequestError } from './provider-client.ts';
import { validateTemplateBody } from './template-variables.ts';

/** Status given to a synced template the provider no longer lists; the row stays for the messages that used it. */
export const NO_LONGER_LISTED_STATUS = 'DELETED';

export type TemplateSyncOutcome = { listed: number; created: number; updated: number; noLongerListed: number } | { skipped: string };

export async function syncTemplates(
  em: EntityManager,
  deps: { messaging: MessagingProvider; secrets: Secrets; log: Logger },
  accountId: string,
): Promise<TemplateSyncOutcome> {
  const credentials = await loadProviderCredentials(em, deps.secrets, accountId);
  if (!credentials) return { skipped: 'no messaging connection' };
  if (!credentials.businessAccountId) return { skipped: 'the connection has no business_account_id' };

  let listed: ProviderTemplate[];
  try {
    listed = await deps.messaging.listTemplates(credentials);
  } catch (error) {
    // A refused listing (a revoked token, say) will be refused again: wait for the next run.
    if (error instanceof ProviderRequestError && !error.retryable) {
      deps.log.warn({ accountId, status: error.status, error: error.message }, 'template sync refused by the messaging provider');
      return { skipped: error.message };
    }
    throw error;
  }

  return em.transactional(async (tx) => {
    const existing = await tx.find(MessageTemplate, { account: accountId });
    const byKey = new Map(existing.map((template) => [keyOf(template.name, template.language), template]));
    const seen = new Set<string>();
    let created = 0;
    let updated = 0;
    /** Existing templates whose row changes, written together by account and id. */
    const changed: MessageTemplate[] = [];
    const now = new Date();
    for (const template of listed) {
      const key = keyOf(template.name, template.language);
      // A listing that repeats a template is read once.
      if (seen.has(key)) continue;
      seen.add(key);
      const body = bodyTextOf(template.components);
      const validation = validateTemplateBody(body);
      // Stored all the same: the account sees it, and sends refuse it until it is fixed.
      if (!validation.ok) deps.log.warn({ accountId, template: template.name, language: template.language, problems: validation.problems }, 'synced template has an invalid body');
      const fields = {
        providerTemplateId: template.id || null,
        status: template.status,
        category: template.category,
        body,
        components: template.components,
        template: template.raw,
        syncedAt: now,
      };
      const current = byKey.get(key);
      if (current) {
        tx.assign(current, fields);
        changed.push(current);
        updated++;
      } else {
        tx.create(MessageTemplate, { id: newId('tpl'), account: accountId, name: template.name, language: template.language, createdAt: now, ...fields });
        created++;
      }
    }
    let noLongerListed = 0;
    for (const template of existing) {
      // Templates added by the admin command were never the provider's to withdraw.
      if (seen.has(keyOf(template.name, template.language)) || template.providerTemplateId === null) continue;
      if (template.status !== NO_LONGER_LISTED_STATUS) {
        template.status = NO_LONGER_LISTED_STATUS;
        template.syncedAt = now;
        changed.push(template);
        noLongerListed++;
      }
    }
    await updateTemplates(tx, accountId, changed);
    await tx.flush();
    return { listed: listed.length, created, updated, noLongerListed };
  });
}

/**
 * The templates' rows take their entities' values in one statement that names the account
 * (the ORM's flush would find each row by id alone); the entities are then clean, so the
 * flush writes only the new ones.
 */
async function updateTemplates(tx: EntityManager, accountId: string, templates: MessageTemplate[]): Promise<void> {
  if (templates.length === 0) return;
  const rows = JSON.stringify(
    templates.map((template) => ({
      id: template.id,
      provider_template_id: template.providerTemplateId ?? null,
      status: template.status,
      category: template.category,
      body: template.body,
      components: template.components,
      template: template.template,
      synced_at: template.syncedAt.toISOString(),
    })),
  );
  await runSql(
    tx,
    sql`update message_templates t
        set provider_template_id = o.provider_template_id, status = o.status, category = o.category, body = o.body,
            components = o.components, template = o.template, synced_at = o.synced_at
       from json_to_recordset(${rows}::json)
         as o(id text, provider_template_id text, status text, category text, body text, components jsonb, template jsonb, synced_at timestamptz)
      where t.account_id = ${accountId} and t.id = o.id`,
  );
  for (const template of templates) tx.getUnitOfWork().merge(template);
}

function keyOf(name: string, language: string): string {
  return `${name}\u0000${language}`;
}

/** The BODY component's text, where the template's variables are. */
export function bodyTextOf(components: unknown[]): string {
  for (const component of components) {
    if (!component || typeof component !== 'object') continue;
    const { type, text } = component as { type?: unknown; text?: unknown };
    if (typeof type === 'string' && type.toUpperCase() === 'BODY' && typeof text === 'string') return text;
  }
  return '';
}
