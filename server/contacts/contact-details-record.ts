// One contact as GET /contacts/{contactId} shows it: its fields, flags and tags, and for a
// chat-widget visitor the `widget` block (the widget, and what the visitor's page reported,
// first and last seen). Never the widget visitor id: it is the visitor's credential.
import { z } from 'zod';

export const ContactWidgetRecord = z.object({
  id: z.string().describe('The chat widget (configId) the visitor wrote through.'),
  name: z.string().nullable().describe("The widget's name; null once the widget is deleted."),
  page_url: z.string().nullable().describe('The page the visitor last wrote from, as the widget page reported it.'),
  referrer: z.string().nullable().describe('Where the visitor came from: the first referrer the widget page reported.'),
  language: z.string().nullable().describe("The visitor's browser language, as last reported."),
  user_agent: z.string().nullable().describe("The visitor's browser (User-Agent), as last seen."),
  first_seen_at: z.string().nullable().describe('The first visitor message (ISO 8601); null before any.'),
  last_seen_at: z.string().nullable().describe('The latest visitor message (ISO 8601); null before any.'),
});
export type ContactWidgetRecord = z.infer<typeof ContactWidgetRecord>;

export const ContactDetailsRecord = z.object({
  id: z.string(),
  firstName: z.string(),
  lastName: z.string(),
  email: z.string().nullable().describe('Null when none was given.'),
  phoneNumber: z.string().nullable().describe('E.164; null for a chat-widget visitor.'),
  channel: z.string().nullable(),
  is_bot_active: z.boolean(),
  do_not_disturb: z.boolean(),
  archived: z.boolean(),
  tags: z.array(z.string()).describe("The names of the contact's tags, in name order."),
  created_at: z.string(),
  widget: ContactWidgetRecord.nullable().describe('Null for a contact that is not a chat-widget visitor.'),
});
export type ContactDetailsRecord = z.infer<typeof ContactDetailsRecord>;

/** The statement's row (get-contact.ts); timestamps already ISO 8601. */
export type ContactDetailsRow = {
  id: string;
  first_name: string;
  last_name: string;
  email: string | null;
  phone_number: string | null;
  channel: string | null;
  is_bot_active: boolean;
  do_not_disturb: boolean;
  archived: boolean;
  tags: string[];
  created_at: string;
  chat_widget_id: string | null;
  widget_name: string | null;
  page_url: string | null;
  referrer: string | null;
  language: string | null;
  user_agent: string | null;
  first_seen_at: string | null;
  last_seen_at: string | null;
};

export function toContactDetails(row: ContactDetailsRow): ContactDetailsRecord {
  return {
    id: row.id,
    firstName: row.first_name,
    lastName: row.last_name,
    email: row.email,
    phoneNumber: row.phone_number,
    channel: row.channel,
    is_bot_active: row.is_bot_active,
    do_not_disturb: row.do_not_disturb,
    archived: row.archived,
    tags: row.tags,
    created_at: row.created_at,
    widget:
      row.chat_widget_id === null
        ? null
        : {
            id: row.chat_widget_id,
            name: row.widget_name,
            page_url: row.page_url,
            referrer: row.referrer,
            language: row.language,
            user_agent: row.user_agent,
            first_seen_at: row.first_seen_at,
            last_seen_at: row.last_seen_at,
          },
  };
}
