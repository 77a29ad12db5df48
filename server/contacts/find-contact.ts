// Contact lookups scoped to the account acted on.
import { LockMode, type EntityManager } from '@mikro-orm/postgresql';
import type pg from 'pg';
import { Contact } from '../db/entities/index.ts';
import { MissingParametersError, NotFoundError } from '../errors.ts';
import { PLACEHOLDER_EMAIL } from './contact-record.ts';
import { normalisePhoneNumber } from './phone.ts';
import { readValue, type CallerRead, type CallerReadValue } from '../auth/caller-read.ts';
import { contactIdSubquery, exactIlikePattern, selectContactId } from './sql/find-contact-id.ts';

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

/**
 * The same match when only the id is needed (the lookup endpoint): one statement on the pool,
 * no entity loaded, or none at all when the caller's statement already read it (`rode`).
 */
export async function findContactIdByIdentifier(
  pool: pg.Pool,
  accountId: string,
  identifier: ContactIdentifier,
  rode?: CallerReadValue,
): Promise<string> {
  const { phoneNumber, email } = normaliseIdentifier(identifier);
  const read = readValue(rode, lookupKey(phoneNumber, email), accountId);
  const id = email === PLACEHOLDER_EMAIL ? null : read ? (read.value as string | null) : await selectContactId(pool, accountId, phoneNumber, email);
  if (id === null) throw new NotFoundError('Contact not found');
  return id;
}

const lookupKey = (phoneNumber: string | undefined, email: string | undefined) => JSON.stringify(['contact-id', phoneNumber ?? null, email ?? null]);

/**
 * The lookup as a read riding in the caller's statement (caller-read.ts), from the request's
 * raw input: null when the input is not a lookup the procedure would make as given.
 */
export function contactLookupRead(rawInput: unknown): CallerRead | null {
  if (rawInput === null || typeof rawInput !== 'object') return null;
  const { phoneNumber, email } = rawInput as Record<string, unknown>;
  if ((phoneNumber !== undefined && typeof phoneNumber !== 'string') || (email !== undefined && typeof email !== 'string')) return null;
  if (!phoneNumber?.trim() && !email?.trim()) return null;
  let identifier: { phoneNumber?: string; email?: string };
  try {
    identifier = normaliseIdentifier({ phoneNumber, email });
  } catch {
    return null;
  }
  if (identifier.email === PLACEHOLDER_EMAIL) return null;
  return {
    key: lookupKey(identifier.phoneNumber, identifier.email),
    select: (account) => contactIdSubquery(account, identifier.phoneNumber, identifier.email),
  };
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
