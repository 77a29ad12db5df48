// GET /whatsapp-templates: the account's templates as the specification's list item.
import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { MessageTemplate } from '../db/entities/index.ts';

export const TemplateListItem = z.object({
  id: z.string(),
  name: z.string(),
  status: z.string(),
  language: z.string(),
  category: z.string(),
  components: z.array(z.unknown()),
  createdAt: z.iso.datetime(),
  template: z.record(z.string(), z.unknown()),
});
export type TemplateListItem = z.infer<typeof TemplateListItem>;

export function toTemplateListItem(template: MessageTemplate): TemplateListItem {
  return {
    id: template.id,
    name: template.name,
    status: template.status,
    language: template.language,
    category: template.category,
    components: template.components,
    createdAt: template.createdAt.toISOString(),
    template: template.template,
  };
}

export async function listTemplates(em: EntityManager, accountId: string): Promise<TemplateListItem[]> {
  const templates = await em.find(MessageTemplate, { account: accountId }, { orderBy: { name: 'asc', language: 'asc' } });
  return templates.map(toTemplateListItem);
}
