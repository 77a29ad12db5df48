// The application router: every operation of the API, served at /trpc and,
// through trpc-to-openapi, as the /v1 REST surface.
import { router } from '../server/trpc.ts';
import { apiKeysRouter } from './api-keys/index.ts';
import { appointmentsRouter } from './appointments/index.ts';
import { broadcastsRouter } from './broadcasts/index.ts';
import { chatSessionsRouter } from './chat-sessions/index.ts';
import { chatWidgetPublicRouter } from './chat-widget-public/index.ts';
import { chatWidgetsRouter } from './chat-widgets/index.ts';
import { messagesRouter } from './messages/index.ts';
import { summariesRouter } from './summaries/index.ts';
import { contactsRouter } from './contacts/index.ts';
import { listsRouter } from './lists/index.ts';
import { messagingRouter } from './messaging/index.ts';
import { subAccountsRouter } from './sub-accounts/index.ts';
import { tasksRouter } from './tasks/index.ts';
import { tagsRouter } from './tags/index.ts';
import { templatesRouter } from './templates/index.ts';
import { usageRouter } from './usage/index.ts';
import { webhooksRouter } from './webhooks/index.ts';

export const appRouter = router({
  apiKeys: apiKeysRouter,
  messages: messagesRouter,
  chatSessions: chatSessionsRouter,
  summaries: summariesRouter,
  contacts: contactsRouter,
  lists: listsRouter,
  subAccounts: subAccountsRouter,
  tasks: tasksRouter,
  tags: tagsRouter,
  usage: usageRouter,
  webhooks: webhooksRouter,
  messaging: messagingRouter,
  templates: templatesRouter,
  broadcasts: broadcastsRouter,
  chatWidgets: chatWidgetsRouter,
  chatWidgetPublic: chatWidgetPublicRouter,
  appointments: appointmentsRouter,
});

/** For internal TypeScript apps: `createTRPCClient<AppRouter>(...)`. */
export type AppRouter = typeof appRouter;
