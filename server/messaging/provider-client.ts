// The messaging provider (WhatsApp Cloud API shape) as the service uses it: send a
// template or a free-form session message, list the business account's templates, check that a token reaches a number. Requests go through the one outbound
// client, so the address guard, time-outs and pools apply; the access token only ever
// travels in the Authorization header and never appears in a result or an error.
import { createOutboundClient, type OutboundResponse } from '../outbound/http-client.ts';
import type { ConnectionCheck, ConnectionProblem, MessagingProvider, ProviderCredentials, ProviderSendResult, ProviderTemplate } from './provider.ts';

/**
 * A provider call other than a send failed; `retryable` says whether trying later may help.
 * The provider's failure, not the service's: logged as a warning without a stack (`outside`).
 */
export class ProviderRequestError extends Error {
  override name = 'ProviderRequestError';
  status: number | null;
  retryable: boolean;
  readonly outside: string;
  constructor(message: string, status: number | null, retryable: boolean) {
    super(message);
    this.status = status;
    this.retryable = retryable;
    this.outside = message;
  }
}

const TEMPLATE_PAGE_SIZE = 100;
const PHONE_NUMBER_PAGE_SIZE = 100;
/** A business account holds a handful of numbers; this bounds a provider that pages forever. */
const MAX_PHONE_NUMBER_PAGES = 20;
/** 50 pages of 100: far beyond any real business account; stops a provider that pages forever. */
const MAX_TEMPLATE_PAGES = 50;

export function createMessagingProvider(options: { baseUrl: string; timeoutMs: number; allowHosts: readonly string[] }): MessagingProvider {
  const client = createOutboundClient({ timeoutMs: options.timeoutMs, allowHosts: options.allowHosts });
  const base = options.baseUrl.replace(/\/+$/, '');
  const baseOrigin = new URL(base).origin;
  const headers = (credentials: ProviderCredentials): Record<string, string> => ({
    authorization: `Bearer ${credentials.accessToken}`,
    accept: 'application/json',
  });

  /** GET of one provider object; an unreachable object is a refusal naming it. */
  async function readObject(
    credentials: ProviderCredentials,
    url: string,
    unreachable: { problem: ConnectionProblem; message: string },
  ): Promise<{ ok: true; body: unknown } | Extract<ConnectionCheck, { ok: false }>> {
    const response = await client.request(url, { method: 'GET', headers: headers(credentials) });
    if (response.delivered) return { ok: true, body: parseJson(response.body) };
    const refusal = classifyRefusal(response);
    const said = providerSaid(response, credentials.accessToken);
    if (refusal === 'token') return { ok: false, problem: 'token_refused', message: `The access token was refused by the messaging provider${said}` };
    if (refusal === 'object') return { ok: false, problem: unreachable.problem, message: `${unreachable.message}${said}` };
    return { ok: false, problem: 'provider_unavailable', message: describeFailure(response, 'could not check the credentials').message };
  }

  /** POST /{phone_number_id}/messages: the provider's message id, or why it refused. */
  async function postMessage(credentials: ProviderCredentials, message: { to: string; type: string } & Record<string, unknown>): Promise<ProviderSendResult> {
    const response = await client.request(`${base}/${encodeURIComponent(credentials.phoneNumberId)}/messages`, {
      method: 'POST',
      headers: { ...headers(credentials), 'content-type': 'application/json' },
      body: JSON.stringify({
        messaging_product: 'whatsapp',
        ...message,
        // The Cloud API wants the number as digits, without the E.164 plus.
        to: message.to.replace(/\D/g, ''),
      }),
    });
    if (!response.delivered) {
      const failure = describeFailure(response, 'refused the send');
      return { ok: false, status: response.statusCode, retryable: failure.retryable, message: failure.message };
    }
    const id = (parseJson(response.body) as { messages?: Array<{ id?: unknown }> } | null)?.messages?.[0]?.id;
    // Accepted but unreadable: the message may be on its way, so sending again could duplicate it.
    if (typeof id !== 'string' || !id) {
      return { ok: false, status: response.statusCode, retryable: false, message: 'The messaging provider accepted the send but returned no message id' };
    }
    return { ok: true, providerMessageId: id };
  }

  return {
    async checkConnection(credentials) {
      const phone = encodeURIComponent(credentials.phoneNumberId);
      const number = await readObject(credentials, `${base}/${phone}?fields=id,display_phone_number`, {
        problem: 'phone_number_unreachable',
        message: `The access token cannot reach phone_number_id ${credentials.phoneNumberId}`,
      });
      if (!number.ok) return number;
      if ((number.body as { id?: unknown } | null)?.id !== credentials.phoneNumberId) {
        return { ok: false, problem: 'phone_number_unreachable', message: `The messaging provider did not confirm phone_number_id ${credentials.phoneNumberId}` };
      }
      if (!credentials.businessAccountId) return { ok: true };

      const business = credentials.businessAccountId;
      const first = `${base}/${encodeURIComponent(business)}/phone_numbers?fields=id&limit=${PHONE_NUMBER_PAGE_SIZE}`;
      let url: string | null = first;
      for (let page = 0; url && page < MAX_PHONE_NUMBER_PAGES; page++) {
        const listing = await readObject(credentials, url, {
          problem: 'business_account_unreachable',
          message: `The access token cannot reach business_account_id ${business}`,
        });
        if (!listing.ok) return listing;
        const body = listing.body as { data?: unknown; paging?: { next?: unknown; cursors?: { after?: unknown } } } | null;
        if (!body || !Array.isArray(body.data)) {
          return { ok: false, problem: 'provider_unavailable', message: 'The messaging provider answered the phone-number listing with something other than a listing' };
        }
        if (body.data.some((item) => (item as { id?: unknown } | null)?.id === credentials.phoneNumberId)) return { ok: true };
        url = nextPageUrl(body.paging, first, baseOrigin);
      }
      return {
        ok: false,
        problem: 'phone_number_not_in_business_account',
        message: `phone_number_id ${credentials.phoneNumberId} does not belong to business_account_id ${business}`,
      };
    },

    sendTemplate: (credentials, send) =>
      postMessage(credentials, {
        to: send.to,
        type: 'template',
        template: {
          name: send.templateName,
          language: { code: send.language },
          components: send.parameters.length ? [{ type: 'body', parameters: send.parameters.map((text) => ({ type: 'text', text })) }] : [],
        },
      }),

    sendSessionMessage(credentials, send) {
      if (!send.media) return postMessage(credentials, { to: send.to, type: 'text', text: { body: send.text } });
      const type = mediaTypeOf(send.media.contentType);
      // Audio carries no caption in the Cloud API.
      const captioned = type === 'image' || type === 'video' || type === 'document';
      return postMessage(credentials, { to: send.to, type, [type]: { link: send.media.url, ...(captioned && send.text ? { caption: send.text } : {}) } });
    },

    async listTemplates(credentials) {
      if (!credentials.businessAccountId) {
        throw new ProviderRequestError('The messaging connection has no business_account_id, so its templates cannot be listed', null, false);
      }
      const first = `${base}/${encodeURIComponent(credentials.businessAccountId)}/message_templates?limit=${TEMPLATE_PAGE_SIZE}`;
      const templates: ProviderTemplate[] = [];
      let url: string | null = first;
      for (let page = 0; url && page < MAX_TEMPLATE_PAGES; page++) {
        const response = await client.request(url, { method: 'GET', headers: headers(credentials) });
        if (!response.delivered) {
          const failure = describeFailure(response, 'refused the template listing');
          throw new ProviderRequestError(failure.message, response.statusCode, failure.retryable);
        }
        const listing = parseJson(response.body) as {
          data?: unknown;
          paging?: { next?: unknown; cursors?: { after?: unknown } };
        } | null;
        if (!listing || !Array.isArray(listing.data)) {
          throw new ProviderRequestError('The messaging provider answered the template listing with something other than a listing', response.statusCode, true);
        }
        for (const item of listing.data) {
          const template = toProviderTemplate(item);
          if (template) templates.push(template);
        }
        url = nextPageUrl(listing.paging, first, baseOrigin);
      }
      return templates;
    },

    close: () => client.close(),
  };
}

/** The Cloud API's message type for a media content type. */
function mediaTypeOf(contentType: string): 'image' | 'video' | 'audio' | 'document' {
  const type = contentType.toLowerCase();
  if (type.startsWith('image/')) return 'image';
  if (type.startsWith('video/')) return 'video';
  if (type.startsWith('audio/')) return 'audio';
  return 'document';
}

/**
 * The provider names the next page only when there is one. The token goes with the request,
 * so a `next` link is followed only on the provider's own origin; otherwise the cursor is.
 */
function nextPageUrl(paging: { next?: unknown; cursors?: { after?: unknown } } | undefined, first: string, baseOrigin: string): string | null {
  if (!paging || typeof paging.next !== 'string' || !paging.next) return null;
  const after = paging.cursors?.after;
  if (typeof after === 'string' && after) return `${first}&after=${encodeURIComponent(after)}`;
  try {
    if (new URL(paging.next).origin === baseOrigin) return paging.next;
  } catch {
    // An unparsable link ends the listing like a missing one.
  }
  return null;
}

function toProviderTemplate(item: unknown): ProviderTemplate | null {
  if (!item || typeof item !== 'object') return null;
  const raw = item as Record<string, unknown>;
  if (typeof raw.name !== 'string' || !raw.name) return null;
  const text = (value: unknown, fallback: string) => (typeof value === 'string' && value ? value : fallback);
  return {
    id: text(raw.id, ''),
    name: raw.name,
    language: text(raw.language, 'en'),
    category: text(raw.category, 'MARKETING'),
    status: text(raw.status, 'PENDING'),
    components: Array.isArray(raw.components) ? raw.components : [],
    raw,
  };
}

/**
 * What a provider refusal of a read means: the token itself (Graph API code 190, or a 401),
 * the object (code 100 or any other 4xx: missing, or not this token's), or neither (429,
 * 5xx, no answer), when asking again later may succeed.
 */
function classifyRefusal(response: OutboundResponse): 'token' | 'object' | 'unavailable' {
  const status = response.statusCode;
  if (status === null || status === 429 || status >= 500 || status < 400) return 'unavailable';
  const code = (parseJson(response.body) as { error?: { code?: unknown } } | null)?.error?.code;
  if (status === 401 || code === 190 || code === '190') return 'token';
  // Code 4, 17, 32, 613: the provider's rate limits, which say nothing about the credentials.
  if ([4, 17, 32, 613].includes(Number(code))) return 'unavailable';
  return 'object';
}

/** The provider's own words, for the account; the token is cut out should the provider echo it. */
function providerSaid(response: OutboundResponse, accessToken: string): string {
  const error = (parseJson(response.body) as { error?: { message?: unknown; code?: unknown } } | null)?.error;
  if (!error || typeof error.message !== 'string' || !error.message) return '';
  const code = typeof error.code === 'number' || typeof error.code === 'string' ? ` ${String(error.code)}` : '';
  return ` (provider error${code}: ${error.message.split(accessToken).join('[access token]')})`;
}

/** A clear sentence naming the provider's own error, and whether trying again may succeed. */
function describeFailure(response: OutboundResponse, refused: string): { message: string; retryable: boolean } {
  const status = response.statusCode;
  if (status === null) {
    const failure = response.failure;
    if (failure?.type === 'timeout') return { message: `The messaging provider did not answer in time (${failure.message})`, retryable: true };
    return { message: `The messaging provider could not be reached: ${failure?.message ?? 'unknown error'}`, retryable: true };
  }
  const retryable = status === 429 || status >= 500;
  const error = (parseJson(response.body) as { error?: { message?: unknown; code?: unknown; error_subcode?: unknown; error_data?: { details?: unknown } } } | null)
    ?.error;
  if (error && typeof error.message === 'string') {
    const code = typeof error.code === 'number' || typeof error.code === 'string' ? String(error.code) : null;
    const details = typeof error.error_data?.details === 'string' ? ` (${error.error_data.details})` : '';
    return { message: `The messaging provider ${refused}${code ? ` (${code})` : ''}: ${error.message}${details}`, retryable };
  }
  return { message: `The messaging provider ${refused} with HTTP ${status}`, retryable };
}

function parseJson(body: string | null): unknown {
  if (!body) return null;
  try {
    return JSON.parse(body);
  } catch {
    return null;
  }
}
