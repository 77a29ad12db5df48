// GET and POST /v1/provider-callbacks/whatsapp: the messaging provider's callbacks.
// GET is its verification handshake; POST carries delivery statuses and inbound
// messages, signed over the raw body bytes, so these are plain routes reading the
// raw body rather than procedures.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ApiError, ForbiddenError, InvalidInputError, UnauthorizedError } from '../errors.ts';
import { applyProviderCallback } from '../messaging/callbacks/apply-provider-callback.ts';
import { hasValidSignature, SIGNATURE_HEADER, verificationChallenge } from '../messaging/callbacks/callback-signature.ts';
import { readCallbackPayload } from '../messaging/callbacks/read-callback-payload.ts';
import type { Services } from '../process-services.ts';
import { errorResponse, type PlainRoute } from './openapi.ts';
import { REST_PREFIX } from './rest.ts';

const PATH = '/provider-callbacks/whatsapp';

const TAGS = ['Provider callbacks'];

export const PROVIDER_CALLBACK_ROUTES: PlainRoute[] = [
  {
    method: 'get',
    path: PATH,
    summary:
      'The provider\'s verification handshake: answers `hub.challenge` when `hub.mode` is `subscribe` and `hub.verify_token` is MESSAGING_VERIFY_TOKEN. No credentials.',
    contentType: 'text/plain',
    tags: TAGS,
    parameters: ['hub.mode', 'hub.verify_token', 'hub.challenge'].map((name) => ({ name, in: 'query', required: false, schema: { type: 'string' } })),
    responses: {
      '200': { description: 'The challenge, echoed', content: { 'text/plain': { schema: { type: 'string' } } } },
      '403': { ...errorResponse(403, ['envelope']), description: 'Wrong or missing verify token, or MESSAGING_VERIFY_TOKEN unset' },
    },
  },
  {
    method: 'post',
    path: PATH,
    summary:
      'Delivery statuses and inbound messages from the provider, signed with X-Hub-Signature-256 (HMAC-SHA256 of the body under MESSAGING_APP_SECRET). No credentials.',
    contentType: 'application/json',
    tags: TAGS,
    parameters: [
      {
        name: 'X-Hub-Signature-256',
        in: 'header',
        required: true,
        description: '`sha256=` then the hex HMAC-SHA256 of the raw body under MESSAGING_APP_SECRET.',
        schema: { type: 'string', pattern: '^sha256=[0-9a-fA-F]{64}$' },
      },
    ],
    requestBody: {
      required: true,
      description: 'A WhatsApp Cloud API webhook payload (`object`, `entry[].changes[].value` with `metadata`, `messages`, `statuses`).',
      content: { 'application/json': { schema: { type: 'object', required: ['entry'], properties: { object: { type: 'string' }, entry: { type: 'array' } } } } },
    },
    responses: {
      '200': {
        description: 'Accepted (items about numbers no account connected are ignored)',
        content: {
          'application/json': {
            schema: { type: 'object', required: ['success'], additionalProperties: false, properties: { success: { type: 'boolean', const: true } } },
          },
        },
      },
      '400': { ...errorResponse(400, ['envelope']), description: 'Correctly signed, but not JSON or not a callback payload' },
      '401': { ...errorResponse(401, ['envelope']), description: 'Unsigned or wrongly signed, or MESSAGING_APP_SECRET unset' },
      '500': { ...errorResponse(500, ['envelope']), description: 'Some items could not be applied now; the provider retries, which is safe' },
    },
  },
];

function queryText(request: FastifyRequest, name: string): string | undefined {
  const value = (request.query as Record<string, unknown>)[name];
  return typeof value === 'string' ? value : undefined;
}

export async function registerProviderCallbacks(app: FastifyInstance, services: Services): Promise<void> {
  const { config, log } = services;
  const callbackLog = log.child({ component: 'provider-callbacks' });

  // Its own scope: the signature covers the exact bytes sent, so the body is kept raw here
  // (the host's parser decodes JSON); the host's body limit and error renderer still apply.
  await app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));

    scope.get(`${REST_PREFIX}${PATH}`, async (request, reply) => {
      const challenge = verificationChallenge(
        { mode: queryText(request, 'hub.mode'), verifyToken: queryText(request, 'hub.verify_token'), challenge: queryText(request, 'hub.challenge') },
        config.MESSAGING_VERIFY_TOKEN,
      );
      if (challenge === null) throw new ForbiddenError('Verification failed', { reason: 'verification_failed' });
      return reply.header('cache-control', 'no-store').type('text/plain; charset=utf-8').send(challenge);
    });

    scope.post(`${REST_PREFIX}${PATH}`, async (request, reply) => {
      const rawBody = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
      if (!hasValidSignature(rawBody, request.headers[SIGNATURE_HEADER], config.MESSAGING_APP_SECRET)) {
        throw new UnauthorizedError('Missing or invalid X-Hub-Signature-256');
      }
      let json: unknown;
      try {
        json = JSON.parse(rawBody.toString('utf8'));
      } catch {
        throw new InvalidInputError('Request body is not valid JSON', { reason: 'malformed_json' });
      }
      const payload = readCallbackPayload(json);
      for (const problem of payload.unreadable) callbackLog.warn({ problem }, 'provider callback item unreadable; skipped');
      const result = await applyProviderCallback(services.orm.em.fork(), callbackLog, payload.changes);
      // Every item is idempotent, so asking the provider to send the whole callback again is safe.
      if (result.failed > 0) throw new ApiError(500, 'Some callback items could not be applied; retry later', { reason: 'callback_incomplete' });
      return reply.type('application/json; charset=utf-8').send(JSON.stringify({ success: true }));
    });
  });
}
