// `template:add`: a template as if synced from the provider, for operators and tests that
// have no provider to sync from. Adding the same name and language again replaces it.
import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { Account, MessageTemplate } from '../db/entities/index.ts';
import { newId } from '../db/ids.ts';
import { NotFoundError } from '../errors.ts';
import { toTemplateListItem, type TemplateListItem } from './list-templates.ts';
import { validateTemplateBody } from './template-variables.ts';

export const TemplateAddInput = z.object({
  name: z.string().trim().min(1, '--name must not be empty').max(512, '--name must be at most 512 characters'),
  body: z.string().min(1, '--body must not be empty').max(1024, '--body must be at most 1024 characters (the provider limit)'),
  language: z.string().trim().min(1, '--language must not be empty').default('en'),
  category: z.string().trim().min(1, '--category must not be empty').default('MARKETING'),
  status: z.string().trim().min(1, '--status must not be empty').default('APPROVED'),
});
export type TemplateAddInput = z.input<typeof TemplateAddInput>;

/** The list item, plus the body's problems when it has any (it is stored all the same, as a sync would). */
export type AddedTemplate = TemplateListItem & { body: string; problems?: string[] };

export async function addTemplate(em: EntityManager, accountId: string, rawInput: TemplateAddInput): Promise<AddedTemplate> {
  const input = TemplateAddInput.parse(rawInput);
  return em.transactional(async (tx) => {
    const account = await tx.findOne(Account, accountId, { fields: ['id'] });
    if (!account) throw new NotFoundError(`No account ${accountId}`);
    const components = [{ type: 'BODY', text: input.body }];
    const fields = {
      providerTemplateId: null,
      status: input.status,
      category: input.category,
      body: input.body,
      components,
      // Shaped like the provider's own listing item, so readers of `template` see one format.
      template: { name: input.name, language: input.language, status: input.status, category: input.category, components },
      syncedAt: new Date(),
    };
    let template = await tx.findOne(MessageTemplate, { account: accountId, name: input.name, language: input.language });
    if (template) tx.assign(template, fields);
    else template = tx.create(MessageTemplate, { id: newId('tpl'), account: accountId, name: input.name, language: input.language, createdAt: new Date(), ...fields });
    await tx.flush();
    const validation = validateTemplateBody(input.body);
    return { ...toTemplateListItem(template), body: input.body, ...(validation.ok ? {} : { problems: validation.problems }) };
  });
}
