// A message a contact sent to an account's business number: stored once however
// often the provider retries the callback, with its contact created on first
// contact, and the 24-hour customer-service window opened from its time.
import { UniqueConstraintViolationException, type EntityManager } from '@mikro-orm/postgresql';
import { Contact, Message } from '../../db/entities/index.ts';
import { runSql, sql } from '../../db/sql.ts';
import { ConflictError } from '../../errors.ts';
import { unarchiveOnInbound } from '../../contacts/archive-contact.ts';
import { createContact } from '../../contacts/create-contact.ts';
import { normalisePhoneNumber } from '../../contacts/phone.ts';
import { recordMessage } from '../../messages/record-message.ts';

/** The advisory-lock class of inbound messages (the object is the hash of account and sender). */
const LOCK_CLASS = 0x6962; // "ib"

/** The provider lets a business answer freely for this long after the contact's last message. */
export const CHAT_WINDOW_MS = 24 * 60 * 60 * 1000;

export type InboundMessage = {
  /** The provider's message id (wamid). */
  providerMessageId: string;
  /** The sender's number as the provider sends it: digits with the country code, no `+`. */
  from: string;
  /** The sender's profile name, when the provider gives one. */
  profileName?: string;
  /** `text`, `image`, ... as the provider names it. */
  type: string;
  body: string;
  sentAt: Date;
};

export type InboundOutcome =
  | { recorded: true; messageId: string; contactId: string; contactCreated: boolean }
  | { recorded: false; reason: 'duplicate' };

export async function recordInboundMessage(em: EntityManager, accountId: string, inbound: InboundMessage): Promise<InboundOutcome> {
  // Throws InvalidInputError (a bad item, not worth a retry) before anything is written.
  const phoneNumber = normalisePhoneNumber(`+${inbound.from.replace(/^\+/, '')}`);
  try {
    return await em.transactional(async (tx) => {
      // Callbacks from one sender (a retry racing the original, say) take turns, so the
      // second sees the first's contact and message instead of colliding with them.
      await runSql(tx, sql`select pg_advisory_xact_lock(${LOCK_CLASS}::int, hashtext(${`${accountId}:${phoneNumber}`}::text))`);
      // The id is unique within the account; a retry finds the first delivery's row.
      if (await tx.count(Message, { account: accountId, providerMessageId: inbound.providerMessageId })) return { recorded: false, reason: 'duplicate' } as const;

      const { contactId, created } = await findOrCreateContact(tx, accountId, phoneNumber, inbound.profileName);
      await unarchiveOnInbound(tx, accountId, contactId);
      const recorded = await recordMessage(tx, accountId, {
        contactId,
        direction: 'inbound',
        body: inbound.body,
        type: inbound.type,
        channel: 'whatsapp',
        providerMessageId: inbound.providerMessageId,
        status: 'received',
      });
      await openChatWindow(tx, accountId, contactId, new Date(inbound.sentAt.getTime() + CHAT_WINDOW_MS));
      return { recorded: true, messageId: recorded.messageId, contactId, contactCreated: created } as const;
    });
  } catch (error) {
    // The same message in a concurrent callback committed first.
    if (error instanceof UniqueConstraintViolationException) return { recorded: false, reason: 'duplicate' };
    throw error;
  }
}

async function findOrCreateContact(tx: EntityManager, accountId: string, phoneNumber: string, profileName: string | undefined) {
  const existing = await tx.findOne(Contact, { account: accountId, phoneNumber }, { fields: ['id'] });
  if (existing) return { contactId: existing.id, created: false };
  try {
    // The one creation path, so Contact Created is emitted as for every other contact.
    const created = await createContact(tx, accountId, { phoneNumber, firstName: profileName, channel: 'whatsapp' });
    return { contactId: created.contactId, created: true };
  } catch (error) {
    // Created meanwhile through the API: not a bad item, the retry will find the contact.
    if (error instanceof ConflictError) throw new Error('contact created concurrently; the callback can be retried', { cause: error });
    throw error;
  }
}

/** Opens the window until `expiresAt`; a later expiry already set is kept (a window never shortens). */
async function openChatWindow(tx: EntityManager, accountId: string, contactId: string, expiresAt: Date): Promise<void> {
  // A message older than the window (a callback retried for a day) opens nothing.
  if (expiresAt.getTime() <= Date.now()) return;
  const expires = expiresAt.toISOString();
  await runSql(
    tx,
    sql`update contacts
        set is_chat_window_open = true,
            chat_window_expires_at = greatest(coalesce(chat_window_expires_at, ${expires}::timestamptz), ${expires}::timestamptz),
            updated_at = now()
      where account_id = ${accountId} and id = ${contactId}`,
  );
}
