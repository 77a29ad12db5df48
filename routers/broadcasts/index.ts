// Broadcasts: a template sent to every contact of a list by a background job.
import { router } from '../../server/trpc.ts';

export const broadcastsRouter = router({});
