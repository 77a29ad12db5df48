// A delivery status the provider reports for a message it sent for an account:
// the message's status only moves forward (sent → delivered → read; failed from
// sent or delivered), and each step forward announces itself once.
import { LockMode, type EntityManager } from '@mikro-orm/postgresql';
import { Contact, Message } from '../../db/entities/index.ts';
import { emit } from '../../events/emit.ts';
import { contactEventBlock } from '../../messages/contact-event-data.ts';
import { toMessageEventData } from '../../messages/message-record.ts';

export const PROVIDER_STATUSES = ['sent', 'delivered', 'read', 'failed'] as const;
export type ProviderStatus = (typeof PROVIDER_STATUSES)[number];

export type StatusUpdate = {
  /** The provider's message id (wamid). */
  providerMessageId: string;
  status: ProviderStatus;
  /** When the provider says the status changed. */
  at: Date;
  /** The provider's reasons, for a failure. */
  errors?: { code: number | string; title?: string }[];
};

export type StatusUpdateOutcome = 'applied' | 'unchanged' | 'unknown_message';

/** Positions on the way to being read; a status not listed here (inbound `received`, `failed`) is final. */
const PROGRESS: Record<string, number> = { sent: 0, delivered: 1, read: 2 };

/** The statuses the message passes through to reach `target`, in order; none when that would go backwards. */
function stepsTowards(current: string, target: ProviderStatus): ('delivered' | 'read' | 'failed')[] {
  const from = PROGRESS[current];
  if (from === undefined) return [];
  if (target === 'failed') return from < PROGRESS.read! ? ['failed'] : [];
  if (target === 'delivered') return from < PROGRESS.delivered! ? ['delivered'] : [];
  // A message read before its delivery was reported was delivered too: both are announced.
  if (target === 'read') return from < PROGRESS.delivered! ? ['delivered', 'read'] : from < PROGRESS.read! ? ['read'] : [];
  return [];
}

export async function applyStatusUpdate(em: EntityManager, accountId: string, update: StatusUpdate): Promise<StatusUpdateOutcome> {
  return em.transactional(async (tx) => {
    // The row lock orders concurrent callbacks about one message, so each step is announced once.
    const message = await tx.findOne(
      Message,
      { providerMessageId: update.providerMessageId, account: accountId },
      { lockMode: LockMode.PESSIMISTIC_WRITE },
    );
    if (!message) return 'unknown_message';
    const steps = stepsTowards(message.status, update.status);
    if (steps.length === 0) return 'unchanged';

    const contact = await tx.findOneOrFail(Contact, { id: message.contact.id, account: accountId });
    for (const step of steps) {
      message.status = step;
      if (step === 'read') message.readAt = update.at;
      if (step === 'failed') continue;
      // A message whose session was deleted keeps its events, with no session id.
      const data = {
        message: { ...toMessageEventData(message, message.session?.id ?? ''), session_id: message.session?.id ?? null },
        contact: contactEventBlock(contact),
        status: step,
      };
      await emit(tx, accountId, step === 'delivered' ? 'Deliveries' : 'Reads', data);
    }
    return 'applied';
  });
}
