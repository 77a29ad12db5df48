// POST /tags: the contact (by phone number or e-mail) joins the tag, which is
// created when new. Another account's contact is not found here.
import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { Tag } from '../db/entities/index.ts';
import { newId } from '../db/ids.ts';
import { queryRows, runSql, sql } from '../db/sql.ts';
import { MissingParametersError } from '../errors.ts';
import { findContactByIdentifier } from '../contacts/find-contact.ts';
import { spendCredits } from '../credits/spend-credits.ts';
import { PhoneNumberOrBlank } from '../contacts/phone.ts';
import { NON_BLANK_TEXT_PATTERN } from '../input-rules.ts';
import { toTagRecord, type TagRecord } from './tag-record.ts';

/** Credits a new tag assignment costs; re-adding a contact to a tag costs nothing. */
export const TAG_ASSIGNMENT_COST = 1;

/** The spec sends these in the query string of a POST; the REST adapter merges them into the input. */
export const TagAssignInput = z.object({
  // Blank is the same as absent (400): the pattern says so in the OpenAPI document.
  tag: z.string().max(200, 'tag must be at most 200 characters').meta({ pattern: NON_BLANK_TEXT_PATTERN }).optional(),
  phoneNumber: PhoneNumberOrBlank.optional(),
  email: z.string().optional(),
  description: z.string().max(2000, 'description must be at most 2000 characters').nullable().optional(),
});
export type TagAssignInput = z.infer<typeof TagAssignInput>;

/**
 * A new membership spends one credit in the same transaction; without the
 * credit nothing is written (402).
 */
export async function assignTag(em: EntityManager, accountId: string, input: TagAssignInput): Promise<TagRecord> {
  const name = input.tag?.trim();
  if (!name) throw new MissingParametersError('Missing required parameter: tag');
  const contact = await findContactByIdentifier(em, accountId, input);
  return em.transactional(async (tx) => {
    // Insert-or-nothing, then read: two requests creating the same tag at once both end up with the one row.
    await runSql(
      tx,
      sql`insert into tags (id, account_id, name, description) values (${newId('tag')}, ${accountId}, ${name}, ${input.description ?? null})
       on conflict (account_id, name) do nothing`,
    );
    const tag = await tx.findOneOrFail(Tag, { account: accountId, name });
    const added = await queryRows<{ contact_id: string }>(
      tx,
      sql`insert into contact_tags (contact_id, tag_id, account_id) values (${contact.id}, ${tag.id}, ${accountId})
       on conflict (contact_id, tag_id, account_id) do nothing
       returning contact_id`,
    );
    if (added.length > 0) await spendCredits(tx, accountId, TAG_ASSIGNMENT_COST, 'tag_assignment');
    return toTagRecord(tag);
  });
}
