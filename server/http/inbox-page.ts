// The agent console (GET /v1/inbox), served from widget/ like the widget pages: static files,
// no build step. It holds no credential of its own; the person signs in with an API key or
// ID token, which the page keeps in the tab's sessionStorage and sends to the API.
import { readFile } from 'node:fs/promises';
import type { FastifyInstance } from 'fastify';
import { REST_PREFIX } from './rest.ts';
import { fillTemplate, pageHeaders, sendAsset, socketSource, staticAsset, type StaticAsset } from './widget-pages.ts';

const WIDGET_DIR = new URL('../../widget/', import.meta.url);
export const INBOX_PATH = `${REST_PREFIX}/inbox`;
const ASSET_BASE = `${REST_PREFIX}/inbox-assets`;

const SCRIPT = 'application/javascript; charset=utf-8';
// The console's ES modules (inbox.js imports the others) and its style sheet.
const ASSET_FILES: Record<string, { file: string; contentType: string }> = {
  'inbox.js': { file: 'inbox.js', contentType: SCRIPT },
  'inbox-api.js': { file: 'inbox-api.js', contentType: SCRIPT },
  'inbox-live.js': { file: 'inbox-live.js', contentType: SCRIPT },
  'inbox-alerts.js': { file: 'inbox-alerts.js', contentType: SCRIPT },
  'inbox-dialog.js': { file: 'inbox-dialog.js', contentType: SCRIPT },
  'inbox-details.js': { file: 'inbox-details.js', contentType: SCRIPT },
  'inbox-messages.js': { file: 'inbox-messages.js', contentType: SCRIPT },
  'inbox.css': { file: 'inbox.css', contentType: 'text/css; charset=utf-8' },
};

export async function registerInboxPage(app: FastifyInstance): Promise<void> {
  const read = (file: string) => readFile(new URL(file, WIDGET_DIR), 'utf8');
  const page = fillTemplate(await read('inbox.html'), { apiBase: REST_PREFIX, assetBase: ASSET_BASE });
  const assets = new Map<string, StaticAsset>();
  for (const [name, { file, contentType }] of Object.entries(ASSET_FILES)) assets.set(name, staticAsset(await read(file), contentType));
  for (const [name, asset] of assets) {
    app.get(`${ASSET_BASE}/${name}`, async (request, reply) => sendAsset(request, reply, asset));
  }
  app.get(INBOX_PATH, async (request, reply) => {
    const policy = [
      "default-src 'self'",
      "script-src 'self'",
      "style-src 'self'",
      // The /trpc WebSocket of this host, for the live feed.
      `connect-src 'self'${socketSource(request)}`,
      // A message's image (https only; a visitor's is loaded only when the agent asks for it).
      "img-src 'self' data: https:",
      "object-src 'none'",
      "base-uri 'none'",
      "form-action 'none'",
    ];
    // Not framed by any site (pageHeaders' default): a page that types a credential would invite clickjacking.
    return pageHeaders(reply, policy).send(page);
  });
}
