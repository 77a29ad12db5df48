// Output schemas that several routers return.
import { z } from 'zod';

export const MessageOutput = z.object({
  content: z.string(),
  timestamp: z.string(),
  sender: z.string(),
  channel: z.string(),
});

export const SuccessOnly = z.object({ success: z.literal(true) });
