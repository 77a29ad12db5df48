// POST /summaries: finds the contact by exactly one identifier and queues the
// `generate-summary` job in the request's transaction; the answer does not wait.
import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { findContactByIdentifier } from '../contacts/find-contact.ts';
import { InvalidInputError, MissingParametersError } from '../errors.ts';
import { enqueueJob } from '../jobs.ts';
import { PhoneNumberOrBlank } from '../contacts/phone.ts';
import { BlankText } from '../input-rules.ts';

const EmailAddress = z.email();

// Blank is the same as absent and exactly one is needed (`exactlyOneOf` in the OpenAPI
// document), checked in requestSummary so that its refusals have the spec's shape.
export const SummaryRequestInput = z.object({
  phoneNumber: PhoneNumberOrBlank.optional(),
  email: z.union([z.string().meta({ format: 'email', pattern: z.regexes.email.source }), BlankText]).optional(),
});

export type SummaryRequestInput = z.infer<typeof SummaryRequestInput>;

export const GENERATE_SUMMARY_TASK = 'generate-summary';
export type GenerateSummaryPayload = { accountId: string; contactId: string };

/** Enough for a provider outage of a few minutes (exponential backoff: about 3 s, 7 s, 20 s, 55 s). */
const SUMMARY_MAX_ATTEMPTS = 5;

export async function requestSummary(em: EntityManager, accountId: string, input: SummaryRequestInput): Promise<{ message: string }> {
  const phoneNumber = input.phoneNumber?.trim() || undefined;
  const email = input.email?.trim() || undefined;
  if (!phoneNumber && !email) throw new MissingParametersError('Missing required parameters: phoneNumber or email');
  if (phoneNumber && email) throw new InvalidInputError('Send exactly one of phoneNumber or email, not both');
  // A blank value counts as absent, so the format is checked only after the one-of rule (on the
  // address as sent, as the OpenAPI document's pattern reads it).
  if (email && !EmailAddress.safeParse(input.email).success) throw new InvalidInputError('email must be a valid e-mail address');
  const contact = await findContactByIdentifier(em, accountId, { phoneNumber, email });
  await em.transactional(async (tx) => {
    const payload: GenerateSummaryPayload = { accountId, contactId: contact.id };
    // One pending job per contact: asking again before it ran replaces it instead of summarizing twice.
    await enqueueJob(tx, GENERATE_SUMMARY_TASK, payload, { maxAttempts: SUMMARY_MAX_ATTEMPTS, jobKey: `${GENERATE_SUMMARY_TASK}:${contact.id}` });
  });
  return { message: 'Summary generation initiated' };
}
