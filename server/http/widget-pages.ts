// What a website embeds or links to, served from widget/: the chat widget's embed script
// (GET /v1/scripts/chat-widget.js), the widget page it frames (GET /v1/chat-widget/{configId}
// and /{configId}/{fromId}) with its assets, and the messaging-app click-to-chat page
// (GET /v1/whatsapp-widget/{phone} and /{phone}/{message}). The files are read once at start;
// the pages are those files with HTML-escaped values put in.
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { compactScript } from './compact-script.ts';
import { normaliseLinkPhoneNumber, PHONE_NUMBER_OR_DIGITS_PATTERN } from '../contacts/phone.ts';
import { ApiError } from '../errors.ts';
import type { Services } from '../process-services.ts';
import { countAndReadWidget } from '../widgets/read-public-widget-config.ts';
import { errorResponse, RETRY_AFTER_HEADER, type PlainRoute } from './openapi.ts';
import { REST_PREFIX } from './rest.ts';

const WIDGET_DIR = new URL('../../widget/', import.meta.url);
const ASSET_BASE = `${REST_PREFIX}/chat-widget-assets`;
const SCRIPT_PATH = '/scripts/chat-widget.js';

// Longer ids are no widget's; refused before the database is asked.

const TAGS = ['Chat widget'];

/** Files a browser caches and revalidates with If-None-Match (the embed script, the page's assets). */
export type StaticAsset = { body: string; contentType: string; etag: string };

const SCRIPT = 'application/javascript; charset=utf-8';
// The modules page.js (chat-widget-page.js) imports, served under their own names beside it
// like the agent console's (not listed one by one in the OpenAPI document: page.js stands for them).
export const PAGE_MODULES = [
  'widget-state.js',
  'widget-notices.js',
  'widget-api.js',
  'widget-identity.js',
  'widget-sound.js',
  'widget-scroll.js',
  'widget-conversation.js',
  'widget-sync.js',
  'widget-handoff.js',
  'widget-config.js',
  'widget-outbox.js',
  'widget-live.js',
  'widget-composer.js',
];

const ASSET_FILES: Record<string, { file: string; contentType: string }> = {
  'page.js': { file: 'chat-widget-page.js', contentType: SCRIPT },
  'page.css': { file: 'chat-widget-page.css', contentType: 'text/css; charset=utf-8' },
  'click-to-chat.css': { file: 'click-to-chat.css', contentType: 'text/css; charset=utf-8' },
};

const stringParameter = (name: string, where: 'path' | 'header', description: string, required = true) => ({
  name,
  in: where,
  required,
  description,
  schema: { type: 'string' },
});

const IF_NONE_MATCH = stringParameter('If-None-Match', 'header', 'An ETag received earlier: 304 with no body when it is still current.', false);
const NOT_MODIFIED = { '304': { description: 'Not modified: If-None-Match names the current ETag' } };
const HTML_HEADERS_NOTE =
  'Sent with Content-Security-Policy (scripts, styles and connections only from this origin), X-Content-Type-Options: nosniff and Referrer-Policy: no-referrer.';
const NOT_FRAMED_NOTE = 'No other site may frame it (Content-Security-Policy frame-ancestors \'none\', X-Frame-Options: DENY).';
const PATH_TOO_LONG = { '414': { ...errorResponse(414, ['envelope']), description: 'A path segment is longer than 100 characters' } };
const textResponse = (description: string) => ({ description, content: { 'text/plain': { schema: { type: 'string' } } } });
const htmlResponse = (description: string) => ({ description, content: { 'text/html': { schema: { type: 'string' } } } });

function widgetPageRoute(path: string, parameters: PlainRoute['parameters']): PlainRoute {
  return {
    method: 'get',
    path,
    summary:
      'The chat widget page (what the embed script frames), for the widget `configId`. ' +
      'It may be framed by the widget\'s `settings.allowedOrigins` (Content-Security-Policy frame-ancestors; any site when the setting is absent). ' +
      HTML_HEADERS_NOTE +
      ' No credentials.',
    contentType: 'text/html',
    tags: TAGS,
    parameters,
    responses: {
      '404': textResponse('No chat widget has this id'),
      ...PATH_TOO_LONG,
      '429': { ...errorResponse(429, ['envelope'], RETRY_AFTER_HEADER), description: 'Too many requests from this client address (WIDGET_REQUESTS_PER_IP_PER_MINUTE)' },
      '500': errorResponse(500, ['envelope']),
    },
  };
}

function clickToChatRoute(path: string, parameters: PlainRoute['parameters']): PlainRoute {
  return {
    method: 'get',
    path,
    summary:
      'The messaging-app click-to-chat page: a link that opens a WhatsApp chat with `phone` (https://wa.me/<number>?text=<message>). ' +
      HTML_HEADERS_NOTE +
      ' ' +
      NOT_FRAMED_NOTE +
      ' No credentials.',
    contentType: 'text/html',
    tags: ['Messaging-app widget'],
    parameters,
    responses: { '400': htmlResponse('An HTML page saying the phone number is not valid'), ...PATH_TOO_LONG },
  };
}

const CONFIG_ID = stringParameter('configId', 'path', 'The chat widget id.');
const PHONE = {
  ...stringParameter('phone', 'path', 'With its country code: + or 00 then the number, or the digits alone (taken as + and the digits), such as +14155552671.'),
  schema: { type: 'string', pattern: PHONE_NUMBER_OR_DIGITS_PATTERN },
};

export const WIDGET_PAGE_ROUTES: PlainRoute[] = [
  {
    method: 'get',
    path: SCRIPT_PATH,
    summary:
      'The chat widget embed script. A site adds `<script src="{base_url}/scripts/chat-widget.js" data-widget-id="<configId>" async></script>`; it shows a chat button that opens the widget page. Cached for 5 minutes, then revalidated by ETag. No credentials.',
    contentType: 'application/javascript',
    tags: TAGS,
    parameters: [IF_NONE_MATCH],
    responses: NOT_MODIFIED,
  },
  widgetPageRoute('/chat-widget/{configId}', [CONFIG_ID]),
  widgetPageRoute('/chat-widget/{configId}/{fromId}', [
    CONFIG_ID,
    stringParameter(
      'fromId',
      'path',
      'A source id used for tracking. Never the visitor\'s identity: a page opened by a link uses the visitor id its own browser keeps, and a framed page takes the id from the embed script (postMessage from an allowed origin), so a link cannot open someone else\'s conversation.',
    ),
  ]),
  ...Object.entries(ASSET_FILES).map(([name, { contentType }]) => ({
    method: 'get' as const,
    path: `/chat-widget-assets/${name}`,
    summary: `A file the widget pages load. Cached for 5 minutes, then revalidated by ETag. No credentials.`,
    contentType: contentType.split(';')[0]!,
    tags: TAGS,
    parameters: [IF_NONE_MATCH],
    responses: NOT_MODIFIED,
  })),
  clickToChatRoute('/whatsapp-widget/{phone}', [PHONE]),
  clickToChatRoute('/whatsapp-widget/{phone}/{message}', [PHONE, stringParameter('message', 'path', 'The text to pre-fill in the chat.')]),
];

const HTML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (character) => HTML_ESCAPES[character]!);
}

/** The template with every `{{name}}` replaced by its value, HTML-escaped unless listed as raw. */
export function fillTemplate(template: string, values: Record<string, string>, raw: Record<string, string> = {}): string {
  return template.replace(/\{\{(\w+)\}\}/g, (_match, name: string) => {
    if (name in raw) return raw[name]!;
    if (name in values) return escapeHtml(values[name]!);
    throw new Error(`template value ${name} missing`);
  });
}

export function staticAsset(body: string, contentType: string): StaticAsset {
  return { body, contentType, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 32)}"` };
}

/**
 * Whether If-None-Match names the current ETag (weak comparison, as RFC 9110 asks for it).
 * `*` is not honoured: these files always exist, so it would be a 304 to a request naming no
 * version, which no cache sends on a GET and the OpenAPI document does not promise.
 */
function matchesEtag(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  return header.split(',').some((candidate) => candidate.trim().replace(/^W\//, '') === etag);
}

export function sendAsset(request: FastifyRequest, reply: FastifyReply, asset: StaticAsset) {
  reply.header('etag', asset.etag).header('cache-control', 'public, max-age=300');
  if (matchesEtag(request.headers['if-none-match'], asset.etag)) return reply.code(304).send();
  return reply.type(asset.contentType).send(asset.body);
}

/** The origins of `settings.allowedOrigins` that are http(s) origins; anything else could not be a CSP source. */
export function frameAncestors(settings: Record<string, unknown> | null): string {
  const allowed = settings?.allowedOrigins;
  // Unset: any site may embed the widget (the owner has not restricted it).
  if (!Array.isArray(allowed)) return '*';
  const origins = new Set<string>();
  for (const entry of allowed) {
    if (typeof entry !== 'string') continue;
    try {
      const url = new URL(entry);
      if (url.protocol === 'https:' || url.protocol === 'http:') origins.add(url.origin);
    } catch {
      // not an origin; left out
    }
  }
  return ["'self'", ...origins].join(' ');
}

/** `wss://host` for the Socket.IO connection, when the Host header is a plain host[:port]. */
export function socketSource(request: FastifyRequest): string {
  const host = request.host;
  return /^(?:[A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$/.test(host) ? ` wss://${host}` : '';
}

/**
 * The headers of every HTML page the service serves (nosniff goes on every response,
 * nosniff.ts): its Content-Security-Policy, `directives` and then who may frame it. No other
 * site frames a page (`frame-ancestors 'none'`, and X-Frame-Options for browsers that predate
 * it) unless `framedBy` names its frame-ancestors sources: only the widget page, for the
 * widget's allowed origins, which X-Frame-Options cannot express.
 */
export function pageHeaders(reply: FastifyReply, directives: string[], framedBy?: string) {
  if (framedBy === undefined) reply.header('x-frame-options', 'DENY');
  return reply
    .header('content-security-policy', [...directives, `frame-ancestors ${framedBy ?? "'none'"}`].join('; '))
    // The page URL can carry a tracking source id; links in messages must not pass it on.
    .header('referrer-policy', 'no-referrer')
    .header('cache-control', 'no-cache')
    .type('text/html; charset=utf-8');
}


const WIDGET_PAGE_WITH_VISITOR = new RegExp(`^(${REST_PREFIX}/chat-widget/[^/]+)/.+$`);

/** A path as the access log writes it: a widget page's visitor id is a credential, so it is left out. */
export function pathForLog(pathname: string): string {
  return pathname.replace(WIDGET_PAGE_WITH_VISITOR, '$1/{fromId}');
}

export async function registerWidgetPages(app: FastifyInstance, services: Services): Promise<void> {
  const read = (file: string) => readFile(new URL(file, WIDGET_DIR), 'utf8');
  const script = staticAsset(compactScript(await read('chat-widget.js')), SCRIPT);
  const assets = new Map<string, StaticAsset>();
  for (const [name, { file, contentType }] of Object.entries(ASSET_FILES)) assets.set(name, staticAsset(await read(file), contentType));
  for (const file of PAGE_MODULES) assets.set(file, staticAsset(await read(file), SCRIPT));
  const widgetPage = await read('chat-widget-page.html');
  const clickToChatPage = await read('click-to-chat.html');
  const invalidNumberPage = await read('click-to-chat-invalid.html');

  app.get(`${REST_PREFIX}${SCRIPT_PATH}`, async (request, reply) => sendAsset(request, reply, script));
  for (const [name, asset] of assets) {
    app.get(`${ASSET_BASE}/${name}`, async (request, reply) => sendAsset(request, reply, asset));
  }

  const serveWidgetPage = async (request: FastifyRequest<{ Params: { configId: string; '*'?: string } }>, reply: FastifyReply) => {
    const { configId } = request.params;
    const fromId = request.params['*'] ?? '';
    // Counted against the client address like every public widget request.
    const widget = await countAndReadWidget(services.pool, services.config, configId, request.ip);
    if (!widget) {
      return reply.code(404).type('text/plain; charset=utf-8').send('Chat widget not found');
    }
    const ancestors = frameAncestors(widget.settings as Record<string, unknown> | null);
    const policy = [
      "default-src 'self'",
      "script-src 'self'",
      "style-src 'self'",
      `connect-src 'self'${socketSource(request)}`,
      "img-src 'self' data: https:",
      // The new-reply sound is a few hundred bytes of WAV made by the page.
      "media-src 'self' data:",
      "object-src 'none'",
      "base-uri 'none'",
      "form-action 'none'",
    ];
    return pageHeaders(reply, policy, ancestors).send(
      // parentOrigins: whose postMessage may hand the framed page its visitor id (the same list as frame-ancestors).
      fillTemplate(widgetPage, { configId, fromId, apiBase: REST_PREFIX, assetBase: ASSET_BASE, parentOrigins: ancestors }),
    );
  };
  // The embed script reads the public configuration from the customer's site, to colour and
  // place its launcher before the page is framed. The endpoint answers 403 to an origin the
  // widget does not allow, so echoing the Origin exposes nothing the owner did not allow.
  const configPath = `${REST_PREFIX}/chat-widget-config`;
  app.addHook('onRequest', (request, reply, done) => {
    const origin = request.headers.origin;
    if (origin && request.method === 'GET' && (request.url === configPath || request.url.startsWith(`${configPath}?`))) {
      reply.header('access-control-allow-origin', origin).header('vary', 'Origin');
    }
    done();
  });
  app.get(`${REST_PREFIX}/chat-widget/:configId`, serveWidgetPage);
  // A wildcard rather than a parameter: a visitor id may be up to 128 characters, past the router's parameter limit.
  app.get(`${REST_PREFIX}/chat-widget/:configId/*`, serveWidgetPage);

  const clickToChatPolicy = ["default-src 'none'", "style-src 'self'", "img-src 'self' data:", "base-uri 'none'", "form-action 'none'"];
  const serveClickToChat = async (request: FastifyRequest<{ Params: { phone: string; '*'?: string } }>, reply: FastifyReply) => {
    const { phone } = request.params;
    const message = request.params['*'] ?? '';
    let number: string;
    try {
      number = normaliseLinkPhoneNumber(phone);
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      const reason = error.message.replace(/^Invalid phone number: /, '');
      return pageHeaders(reply.code(400), clickToChatPolicy).send(
        fillTemplate(invalidNumberPage, { phone, reason: reason.charAt(0).toUpperCase() + reason.slice(1), assetBase: ASSET_BASE }),
      );
    }
    const chatUrl = `https://wa.me/${number.slice(1)}${message ? `?text=${encodeURIComponent(message)}` : ''}`;
    return pageHeaders(reply, clickToChatPolicy).send(
      fillTemplate(
        clickToChatPage,
        { phone: number, message, chatUrl, assetBase: ASSET_BASE },
        { previewHidden: message ? '' : 'hidden' },
      ),
    );
  };
  app.get(`${REST_PREFIX}/whatsapp-widget/:phone`, serveClickToChat);
  // A wildcard: a pre-filled message is often longer than the router's parameter limit.
  app.get(`${REST_PREFIX}/whatsapp-widget/:phone/*`, serveClickToChat);
}
