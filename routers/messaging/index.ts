// The account's messaging-provider connection: the endpoints the contract defines beside the specification.
// The access token goes in and is never shown again.
import { z } from 'zod';
import {
  connectMessagingProvider,
  disconnectMessagingProvider,
  getMessagingConnection,
  MessagingConnectionInput,
  MessagingConnectionStatus,
} from '../../server/messaging/connection.ts';
import { accountProcedure, router } from '../../server/trpc.ts';

const tags = ['Messaging'];
const ConnectionOutput = z.object({
  success: z.literal(true),
  data: MessagingConnectionStatus,
});

export const messagingRouter = router({
  getConnection: accountProcedure
    .meta({
      openapi: { method: 'GET', path: '/messaging/connection', tags, summary: "The account's messaging-provider connection (the token is never returned)" },
      section: 'Integrations',
      access: 'read',
    })
    .input(z.object({}))
    .output(ConnectionOutput)
    .query(async ({ ctx }) => ({ success: true as const, data: await getMessagingConnection(ctx.em, ctx.account.id) })),

  connect: accountProcedure
    .meta({
      openapi: {
        method: 'PUT',
        path: '/messaging/connection',
        tags,
        summary: 'Check the messaging-provider credentials with the provider, store them and sync their templates',
        description:
          'The provider must accept the access token for phone_number_id (and for business_account_id, which must hold the number); ' +
          'otherwise 422 names what failed. 502 when the provider could not be asked. Nothing is stored in either case. ' +
          '409 when the verified number is connected to another account.',
      },
      section: 'Integrations',
      access: 'write',
      errorShapes: { '409': 'envelope', '422': 'envelope', '502': 'envelope' },
    })
    .input(MessagingConnectionInput)
    .output(ConnectionOutput)
    .mutation(async ({ ctx, input }) => ({
      success: true as const,
      data: await connectMessagingProvider(ctx.em, ctx.services, ctx.account.id, input),
    })),

  disconnect: accountProcedure
    .meta({
      openapi: { method: 'DELETE', path: '/messaging/connection', tags, summary: 'Remove the messaging-provider credentials' },
      section: 'Integrations',
      access: 'write',
    })
    .input(z.object({}))
    .output(ConnectionOutput)
    .mutation(async ({ ctx }) => ({ success: true as const, data: await disconnectMessagingProvider(ctx.em, ctx.account.id) })),
});
