// POST /whatsapp-templates/send, and one recipient of a broadcast: a template rendered
// against the contact, charged, handed to the messaging provider and recorded. The credit
// is reserved before the call and released when the provider refuses or fails, so the
// caller is charged exactly when a message went out, and nothing is recorded otherwise
// (charged-send.ts).
import type { EntityManager } from '@mikro-orm/postgresql';
import { requireContact } from '../contacts/find-contact.ts';
import { MessageTemplate } from '../db/entities/index.ts';
import { InvalidInputError, NotFoundError } from '../errors.ts';
import { recordMessage } from '../messages/record-message.ts';
import type { Services } from '../process-services.ts';
import { chargedProviderSend } from './charged-send.ts';
import { requireProviderCredentials } from './connection.ts';
import { contactTemplateFields } from './contact-template-fields.ts';
import { renderTemplate, validateTemplateBody } from './template-variables.ts';

export type TemplateSendInput = { contactId: string; templateId: string };
export type TemplateSent = { messageId: string; providerMessageId: string };

export const TEMPLATE_SEND_CREDITS = 1;
export { PROVIDER_UNAVAILABLE } from './charged-send.ts';

/** A template of the account that may be sent now, or the 404/400 saying why not. */
export async function requireSendableTemplate(em: EntityManager, accountId: string, templateId: string): Promise<MessageTemplate> {
  const template = await em.findOne(MessageTemplate, { id: templateId, account: accountId });
  if (!template) throw new NotFoundError('Template not found', { reason: 'template_not_found' });
  if (template.status !== 'APPROVED') {
    throw new InvalidInputError(`Template "${template.name}" is ${template.status}; only APPROVED templates can be sent`, { reason: 'template_not_approved' });
  }
  const checked = validateTemplateBody(template.body);
  if (!checked.ok) {
    throw new InvalidInputError(`Template "${template.name}" cannot be rendered: ${checked.problems.join('; ')}`, { reason: 'invalid_template' });
  }
  return template;
}

/**
 * `options.broadcastId` names the broadcast in logs; `options.recordWithMessage` writes what
 * the caller keeps about the send (a broadcast recipient's outcome) in the message's own
 * transaction, so the two cannot part.
 */
export async function sendTemplate(
  services: Services,
  accountId: string,
  input: TemplateSendInput,
  options: { broadcastId?: string; recordWithMessage?: (tx: EntityManager, sent: TemplateSent) => Promise<void> } = {},
): Promise<TemplateSent> {
  const em = services.orm.em.fork();
  const contact = await requireContact(em, accountId, input.contactId);
  const to = contact.phoneNumber;
  if (!to) throw new InvalidInputError('The contact has no phone number (a chat-widget visitor); templates are sent to phone numbers', { reason: 'contact_without_phone' });
  const template = await requireSendableTemplate(em, accountId, input.templateId);
  const credentials = await requireProviderCredentials(em, services.secrets, accountId);
  const rendered = renderTemplate(template.body, contactTemplateFields(contact));

  return chargedProviderSend(services, em, {
    accountId,
    credits: TEMPLATE_SEND_CREDITS,
    reason: 'template_send',
    send: () => services.messaging.sendTemplate(credentials, { to, templateName: template.name, language: template.language, parameters: rendered.parameters }),
    record: async (tx, providerMessageId) => {
      const { messageId } = await recordMessage(tx, accountId, {
        contactId: contact.id,
        direction: 'outbound-api',
        body: rendered.text,
        channel: 'whatsapp',
        status: 'sent',
        templateId: template.id,
        providerMessageId,
        reopenClosedSession: true,
      });
      const sent = { messageId, providerMessageId };
      // What the caller keeps about the send (a broadcast recipient's outcome) commits with the message.
      await options.recordWithMessage?.(tx, sent);
      return sent;
    },
    about: { contactId: contact.id, templateId: template.id, broadcastId: options.broadcastId },
    failed: 'template send failed',
  });
}
