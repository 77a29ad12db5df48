// Contact lookups scoped to the account acted on.
import { LockMode, type EntityManager } from '@mikro-orm/postgresql';
import type pg from 'pg';
import { Contact } from '../db/entities/index.ts';
import { MissingParametersError, NotFoundError } from '../errors.ts';
import { PLACEHOLDER_EMAIL } from './contact-record.ts';
import { normalisePhoneNumber } from './phone.ts';
import { exactIlikePattern, selectContactId } from './sql/find-contact-id.ts';

export type ContactIdentifier = { phoneNumber?: string; email?: string };

/** The identifier as stored: phone number in E.164, blank values absent; 400 when neither is given. */
function normaliseIdentifier(identifier: ContactIdentifier): { phoneNumber?: string; email?: string } {
  const phoneNumber = identifier.phoneNumber?.trim() ? normalisePhoneNumber(identifier.phoneNumber) : undefined;
  const email = identifier.email?.trim() || undefined;
  if (!phoneNumber && !email) throw new MissingParametersError('Missing required parameters: phoneNumber or email');
  return { phoneNumber, email };
}

/** By phone number and/or e-mail; both must match when both are given. */
export async function findContactByIdentifier(
  em: EntityManager,
  accountId: string,
  identifier: ContactIdentifier,
): Promise<Contact> {
  const { phoneNumber, email } = normaliseIdentifier(identifier);
  const contact =
    email === PLACEHOLDER_EMAIL
      ? null
      : await em.findOne(
          Contact,
          {
            account: accountId,
            ...(phoneNumber ? { phoneNumber } : {}),
            ...(email ? { email: { $ilike: exactIlikePattern(email) } } : {}),
          },
          { orderBy: { id: 'asc' } },
        );
  if (!contact) throw new NotFoundError('Contact not found');
  return contact;
}

/** E.164 as normalisePhoneNumber writes it: `+`, then at most 15 digits, the first not 0. */
const E164 = /^\+[1-9]\d{1,14}$/;

/**
 * The same match when only the id is needed (the lookup endpoint): one statement on
 * the pool, no entity loaded. A phone number sent in E.164 is looked up as sent first:
 * every stored number was normalised (and so validated) when written, so a match needs no
 * validation, and libphonenumber's 10 to 25 µs for a number this process has not seen
 * before are spent only when nothing matches, to tell 400 from 404.
 */
export async function findContactIdByIdentifier(pool: pg.Pool, accountId: string, identifier: ContactIdentifier): Promise<string> {
  const asSent =
    identifier.phoneNumber !== undefined && !identifier.email?.trim() && E164.test(identifier.phoneNumber) ? identifier.phoneNumber : undefined;
  if (asSent !== undefined) {
    const id = await selectContactId(pool, accountId, asSent, undefined);
    if (id !== null) return id;
  }
  const { phoneNumber, email } = normaliseIdentifier(identifier);
  // The number as sent was its normalised form: the statement above already found nothing.
  const alreadyLookedUp = asSent !== undefined && phoneNumber === asSent;
  const id = email === PLACEHOLDER_EMAIL || alreadyLookedUp ? null : await selectContactId(pool, accountId, phoneNumber, email);
  if (id === null) throw new NotFoundError('Contact not found');
  return id;
}

/** A contact of the account, or 404 (another account's contact is not found). */
export async function requireContact(em: EntityManager, accountId: string, contactId: string): Promise<Contact> {
  const contact = await em.findOne(Contact, { id: contactId, account: accountId });
  if (!contact) throw new NotFoundError('Contact not found');
  return contact;
}

/**
 * The same, locked for the rest of the caller's transaction, so changes to one
 * contact (flags, its open chat session) are made one at a time.
 */
export async function lockContact(tx: EntityManager, accountId: string, contactId: string): Promise<Contact> {
  const contact = await tx.findOne(Contact, { id: contactId, account: accountId }, { lockMode: LockMode.PESSIMISTIC_WRITE });
  if (!contact) throw new NotFoundError('Contact not found');
  return contact;
}
