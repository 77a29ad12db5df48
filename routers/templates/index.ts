// Message templates: the account's synced templates and template sends.
import { router } from '../../server/trpc.ts';

export const templatesRouter = router({});
