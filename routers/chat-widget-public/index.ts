// The chat widget's public endpoints (spec "Chat widget" table): what the widget page in a
// visitor's browser calls. No API key (Authentication rule 9); each names its widget, whose
// allowed origins and abuse limits apply instead. Failure bodies are the spec's own shapes
// for these endpoints, not the envelope.
import { z } from 'zod';
import type { RequestInfo } from '../../server/trpc.ts';
import { publicProcedure, router } from '../../server/trpc.ts';
import type { RequestOrigin } from '../../server/widgets/check-widget-origin.ts';
import { readPublicWidgetConfig } from '../../server/widgets/read-public-widget-config.ts';

function originOf(request: RequestInfo): RequestOrigin {
  const origin = request.headers.origin;
  return { origin: typeof origin === 'string' ? origin : undefined, host: request.headers.host };
}

const PublicConfigOutput = z.object({
  success: z.literal(true),
  data: z.object({
    id: z.string(),
    userId: z.string().describe("The widget owner's account id: send it as `userId` with visitor messages."),
    name: z.string(),
    title: z.string(),
    colors: z.object({
      primary: z.string().optional(),
      background: z.string().optional(),
      text: z.string().optional(),
      visitorBubble: z.string().optional(),
      botBubble: z.string().optional(),
    }),
    greeting: z.string().nullable(),
    position: z.enum(['bottom-right', 'bottom-left']),
  }),
});

export const chatWidgetPublicRouter = router({
  config: publicProcedure
    .meta({
      openapi: { method: 'GET', path: '/chat-widget-config', tags: ['Chat Widget'], summary: "A chat widget's public configuration (no credentials)", protect: false },
      section: 'Chat Widget',
      access: 'read',
      errorShapes: { default: 'successError', '403': 'successError', '404': 'successError' },
    })
    .input(z.object({ configId: z.string().min(1, 'must not be empty') }))
    .output(PublicConfigOutput)
    .query(async ({ ctx, input }) => ({
      success: true as const,
      data: await readPublicWidgetConfig(ctx.services.pool, input.configId, originOf(ctx.request)),
    })),
});
