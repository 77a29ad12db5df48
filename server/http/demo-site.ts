// GET /v1/demo-site/{configId}: a stand-in for a customer's site, served by the service
// itself, so a newcomer sees the widget beside the console without a site of their own
// (`npm run demo`). It is a page like any other site embedding the widget: the same tag,
// the widget's own allowed origins deciding whether it may frame the widget page.
import { readFile } from 'node:fs/promises';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Services } from '../process-services.ts';
import { countAndReadWidget } from '../widgets/read-public-widget-config.ts';
import { REST_PREFIX } from './rest.ts';
import { fillTemplate, pageHeaders, sendAsset, socketSource, staticAsset } from './widget-pages.ts';

const WIDGET_DIR = new URL('../../widget/', import.meta.url);
export const DEMO_SITE_PATH = `${REST_PREFIX}/demo-site`;
const STYLESHEET = `${REST_PREFIX}/demo-site-assets/demo-site.css`;

export async function registerDemoSite(app: FastifyInstance, services: Services): Promise<void> {
  const read = (file: string) => readFile(new URL(file, WIDGET_DIR), 'utf8');
  const page = await read('demo-site.html');
  const stylesheet = staticAsset(await read('demo-site.css'), 'text/css; charset=utf-8');
  app.get(STYLESHEET, async (request, reply) => sendAsset(request, reply, stylesheet));
  app.get(`${DEMO_SITE_PATH}/:configId`, async (request: FastifyRequest<{ Params: { configId: string } }>, reply: FastifyReply) => {
    const { configId } = request.params;
    // Counted against the client address like every public widget request.
    const widget = await countAndReadWidget(services.pool, services.config, configId, request.ip);
    if (!widget) return reply.code(404).type('text/plain; charset=utf-8').send('Chat widget not found');
    const policy = [
      "default-src 'none'",
      "script-src 'self'",
      "style-src 'self'",
      `connect-src 'self'${socketSource(request)}`,
      "frame-src 'self'",
      "img-src 'self' data:",
      "base-uri 'none'",
      "form-action 'none'",
    ];
    const scriptUrl = `https://${request.host}${REST_PREFIX}/scripts/chat-widget.js`;
    return pageHeaders(reply, policy).send(
      fillTemplate(page, {
        configId,
        name: widget.name ?? 'Chat',
        apiBase: REST_PREFIX,
        assetBase: `${REST_PREFIX}/demo-site-assets`,
        scriptUrl,
      }),
    );
  });
}
