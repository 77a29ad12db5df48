// The values a template's named variables read from a contact: its own fields under
// their API names, plus every scalar top-level member of `currentCampaignData`, which is
// where an account keeps its custom fields (`{{company}}` reads `currentCampaignData.company`).
import type { Contact } from '../db/entities/index.ts';
import { PLACEHOLDER_EMAIL, PLACEHOLDER_NAME } from '../contacts/contact-record.ts';
import type { TemplateFields } from './template-variables.ts';

type ContactFieldSource = Pick<
  Contact,
  | 'id'
  | 'phoneNumber'
  | 'email'
  | 'firstName'
  | 'lastName'
  | 'channel'
  | 'externalId'
  | 'instagramId'
  | 'currentCampaign'
  | 'currentCampaignData'
  | 'customChannel'
>;

/** The stored defaults stand for "not given", so `{{first_name|there}}` falls back to `there`. */
function givenName(name: string | null | undefined): string {
  return name && name !== PLACEHOLDER_NAME ? name : '';
}

function scalarText(value: unknown): string | null {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  if (typeof value === 'boolean') return String(value);
  return null;
}

export function contactTemplateFields(contact: ContactFieldSource): TemplateFields {
  const firstName = givenName(contact.firstName);
  const lastName = givenName(contact.lastName);
  const standard: TemplateFields = {
    first_name: firstName,
    last_name: lastName,
    full_name: [firstName, lastName].filter(Boolean).join(' '),
    email: contact.email && contact.email !== PLACEHOLDER_EMAIL ? contact.email : '',
    phone: contact.phoneNumber,
    phone_number: contact.phoneNumber,
    channel: contact.channel ?? '',
    custom_channel: contact.customChannel ?? '',
    external_id: contact.externalId ?? '',
    instagram_id: contact.instagramId ?? '',
    current_campaign: contact.currentCampaign ?? '',
    contact_id: contact.id,
  };
  // No prototype, so a custom field named `__proto__` is just a field.
  const custom: TemplateFields = Object.create(null);
  const data = contact.currentCampaignData;
  if (data && typeof data === 'object' && !Array.isArray(data)) {
    for (const [name, value] of Object.entries(data)) {
      const text = scalarText(value);
      if (text !== null) custom[name] = text;
    }
  }
  // The contact's own fields win, so custom data cannot stand in for its number or e-mail.
  return { ...custom, ...standard };
}
