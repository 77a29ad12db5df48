// The application router: every operation of the API, served at /trpc and,
// through trpc-to-openapi, as the /v1 REST surface.
import { router } from '../server/trpc.ts';
import { contactsRouter } from './contacts/index.ts';
import { listsRouter } from './lists/index.ts';

export const appRouter = router({
  contacts: contactsRouter,
  lists: listsRouter,
});

/** For internal TypeScript apps: `createTRPCClient<AppRouter>(...)`. */
export type AppRouter = typeof appRouter;
