// Output schemas that several routers return.
import { z } from 'zod';

export const ContactRecordOutput = z.object({
  id: z.string(),
  first_name: z.string(),
  last_name: z.string(),
  phone_number: z.string(),
  email: z.string(),
  is_bot_active: z.boolean(),
  do_not_disturb: z.boolean(),
  is_chat_window_open: z.boolean(),
  channel: z.string().nullable(),
  external_id: z.string().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
});

export const ListRecordOutput = z.object({
  id: z.string(),
  name: z.string(),
  description: z.string().nullable(),
  contact_count: z.number().int(),
  created_at: z.string(),
});

export const MessageOutput = z.object({
  content: z.string(),
  timestamp: z.string(),
  sender: z.string(),
  channel: z.string(),
});

export const SuccessOnly = z.object({ success: z.literal(true) });
