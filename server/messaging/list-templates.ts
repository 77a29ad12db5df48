// GET /whatsapp-templates: the account's templates as the specification's list item.
import type { EntityManager } from '@mikro-orm/postgresql';
import { MessageTemplate } from '../db/entities/index.ts';

export type TemplateListItem = {
  id: string;
  name: string;
  status: string;
  language: string;
  category: string;
  components: unknown[];
  createdAt: string;
  template: Record<string, unknown>;
};

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
