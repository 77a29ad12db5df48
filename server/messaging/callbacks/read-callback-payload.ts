// What a WhatsApp Cloud API callback body says, as the plain inputs the callback
// domain functions take. Items that cannot be read are reported, not fatal: the
// rest of the callback is still applied. Text PostgreSQL cannot store (server/input-rules.ts)
// makes an item unreadable: the provider would retry a failing item forever.
import { z } from 'zod';
import { InvalidInputError } from '../../errors.ts';
import { findInputProblem } from '../../input-rules.ts';
import { PROVIDER_STATUSES, type StatusUpdate } from './apply-status-update.ts';
import type { InboundMessage } from './record-inbound-message.ts';

/** The items of one change, for the business number `phoneNumberId`. */
export type CallbackChange = { phoneNumberId: string; messages: InboundMessage[]; statuses: StatusUpdate[] };

export type CallbackPayload = { changes: CallbackChange[]; unreadable: string[] };

const Envelope = z.object({
  entry: z.array(z.object({ changes: z.array(z.unknown()).optional() }).loose()),
});

const Change = z.object({
  field: z.string(),
  value: z
    .object({
      metadata: z.object({ phone_number_id: z.string().min(1) }).loose().optional(),
      contacts: z.array(z.unknown()).optional(),
      messages: z.array(z.unknown()).optional(),
      statuses: z.array(z.unknown()).optional(),
    })
    .loose(),
});

/** Unix seconds, as a string (or a number, to be lenient). */
const UnixSeconds = z.union([z.string().regex(/^\d+$/), z.number().int().nonnegative()]).transform((value) => new Date(Number(value) * 1000));

const ProviderContact = z.object({ wa_id: z.string(), profile: z.object({ name: z.string() }).loose().optional() }).loose();

const WithCaption = z.object({ caption: z.string().optional() }).loose();

const ProviderMessage = z
  .object({
    id: z.string().min(1),
    from: z.string().regex(/^\+?\d+$/),
    timestamp: UnixSeconds,
    type: z.string().min(1),
    text: z.object({ body: z.string() }).loose().optional(),
    image: WithCaption.optional(),
    video: WithCaption.optional(),
    document: WithCaption.optional(),
    button: z.object({ text: z.string() }).loose().optional(),
    interactive: z
      .object({
        button_reply: z.object({ title: z.string() }).loose().optional(),
        list_reply: z.object({ title: z.string() }).loose().optional(),
      })
      .loose()
      .optional(),
  })
  .loose();
type ProviderMessage = z.infer<typeof ProviderMessage>;

const ProviderStatus = z
  .object({
    id: z.string().min(1),
    status: z.string(),
    timestamp: UnixSeconds,
    errors: z.array(z.object({ code: z.union([z.number(), z.string()]), title: z.string().optional() }).loose()).optional(),
  })
  .loose();

/** The text a message carries; media and other kinds without text are stored as `[kind]`. */
function bodyOf(message: ProviderMessage): string {
  const captioned = message.type === 'image' || message.type === 'video' || message.type === 'document' ? message[message.type]?.caption : undefined;
  return (
    (message.type === 'text' ? message.text?.body : undefined) ??
    captioned ??
    message.button?.text ??
    message.interactive?.button_reply?.title ??
    message.interactive?.list_reply?.title ??
    `[${message.type}]`
  );
}

/** 400 when the body is not a callback at all; otherwise every readable item of every `messages` change. */
export function readCallbackPayload(json: unknown): CallbackPayload {
  const envelope = Envelope.safeParse(json);
  if (!envelope.success) throw new InvalidInputError('The callback body must be an object with an entry array', { reason: 'malformed_callback' });

  const payload: CallbackPayload = { changes: [], unreadable: [] };
  for (const entry of envelope.data.entry) {
    for (const rawChange of entry.changes ?? []) {
      const change = Change.safeParse(rawChange);
      if (!change.success) {
        payload.unreadable.push(`change: ${change.error.message}`);
        continue;
      }
      // Other fields (account updates, template reviews) carry nothing this service stores.
      if (change.data.field !== 'messages') continue;
      const { value } = change.data;
      const phoneNumberId = value.metadata?.phone_number_id;
      if (!phoneNumberId) {
        payload.unreadable.push('change without metadata.phone_number_id');
        continue;
      }
      const inNumberId = findInputProblem(phoneNumberId);
      if (inNumberId) {
        payload.unreadable.push(`change: metadata.phone_number_id: ${inNumberId.message}`);
        continue;
      }
      const names = new Map<string, string>();
      for (const rawContact of value.contacts ?? []) {
        const contact = ProviderContact.safeParse(rawContact);
        const inContact = findInputProblem(rawContact);
        if (inContact) payload.unreadable.push(`contact: ${inContact.message}`);
        else if (contact.success && contact.data.profile?.name) names.set(contact.data.wa_id, contact.data.profile.name);
      }
      const messages: InboundMessage[] = [];
      for (const rawMessage of value.messages ?? []) {
        const message = ProviderMessage.safeParse(rawMessage);
        const inMessage = message.success ? findInputProblem(rawMessage) : undefined;
        if (!message.success || inMessage) {
          payload.unreadable.push(`message: ${inMessage?.message ?? message.error!.message}`);
          continue;
        }
        messages.push({
          providerMessageId: message.data.id,
          from: message.data.from,
          profileName: names.get(message.data.from.replace(/^\+/, '')),
          type: message.data.type,
          body: bodyOf(message.data),
          sentAt: message.data.timestamp,
        });
      }
      const statuses: StatusUpdate[] = [];
      for (const rawStatus of value.statuses ?? []) {
        const status = ProviderStatus.safeParse(rawStatus);
        const inStatus = status.success ? findInputProblem(rawStatus) : undefined;
        if (!status.success || inStatus) {
          payload.unreadable.push(`status: ${inStatus?.message ?? status.error!.message}`);
          continue;
        }
        // Statuses this service does not track (`deleted`, `warning`) are skipped quietly.
        if (!(PROVIDER_STATUSES as readonly string[]).includes(status.data.status)) continue;
        statuses.push({
          providerMessageId: status.data.id,
          status: status.data.status as StatusUpdate['status'],
          at: status.data.timestamp,
          errors: status.data.errors?.map((error) => ({ code: error.code, title: error.title })),
        });
      }
      payload.changes.push({ phoneNumberId, messages, statuses });
    }
  }
  return payload;
}
