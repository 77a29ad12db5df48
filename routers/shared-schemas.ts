// Schemas that several routers share: outputs, and query flags.
import { z } from 'zod';

export const SuccessOnly = z.object({ success: z.literal(true) });

/** `true|false` in a query string; a boolean over tRPC. Absent stays undefined. */
export function queryFlag(name: string) {
  return z
    .union([z.boolean(), z.enum(['true', 'false'])], { error: `${name} must be true or false` })
    .optional()
    .transform((value) => (value === undefined ? undefined : value === true || value === 'true'));
}
