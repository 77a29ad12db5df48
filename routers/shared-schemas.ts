// Output schemas that several routers return.
import { z } from 'zod';

export const SuccessOnly = z.object({ success: z.literal(true) });
