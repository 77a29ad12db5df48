// Chat-widget endpoints when something unexpected fails (spec: GET /chat-widget-messages
// and POST /update-message-read-status answer 500 `{error, details}`, `details` only in a
// development environment), and the host's body limit on the incoming message.
import { afterAll, beforeAll, expect, test } from 'vitest';
import { BODY_LIMIT_BYTES } from '../../server/http/host.ts';
import { startTestService, type TestService } from '../helpers/service.ts';

let development: TestService;
let production: TestService;
beforeAll(async () => {
  development = await startTestService({ env: { NODE_ENV: 'development' } });
  production = await startTestService({ databaseUrl: development.databaseUrl, env: { NODE_ENV: 'production' } });
});
afterAll(async () => {
  await production?.stop();
  await development?.stop();
});

test('500 {error, details} in development and {error} elsewhere when the conversation cannot be read', async () => {
  const { apiKey, userId } = await development.createAccount();
  const widget = (await development.request('POST', '/chat-widgets', { apiKey, body: { name: 'Failing' } })).body.data;
  const fromId = 'visitor-failures';
  const sent = await development.request('POST', '/incoming-chat-widget-message', {
    query: { userId },
    body: { customData: { body: 'hi', fromId, toId: widget.id }, messageType: 'text' },
  });
  expect(sent.status).toBe(200);

  // A real failure of the database, not a stand-in: the messages table is briefly gone.
  await development.services.pool.query('alter table messages rename to messages_elsewhere');
  try {
    for (const [service, withDetails] of [[development, true], [production, false]] as const) {
      const polled = await service.request('GET', '/chat-widget-messages', { query: { fromId, toId: widget.id } });
      expect(polled.status).toBe(500);
      expect(polled.body).toEqual(withDetails ? { error: 'Internal server error', details: expect.stringContaining('messages') } : { error: 'Internal server error' });
      const read = await service.request('POST', '/update-message-read-status', { body: { fromId, toId: widget.id } });
      expect(read.status).toBe(500);
      expect(read.body).toEqual(withDetails ? { error: 'Internal server error', details: expect.stringContaining('messages') } : { error: 'Internal server error' });
    }
    const incoming = await production.request('POST', '/incoming-chat-widget-message', {
      query: { userId },
      body: { customData: { body: 'again', fromId, toId: widget.id }, messageType: 'text' },
    });
    expect(incoming.status).toBe(500);
    expect(incoming.body).toEqual({ error: 'Internal server error' });
  } finally {
    await development.services.pool.query('alter table messages_elsewhere rename to messages');
  }
});

test('a body over the host limit is 413 in the documented envelope', async () => {
  const response = await production.request('POST', '/incoming-chat-widget-message', {
    query: { userId: 'someone' },
    rawBody: JSON.stringify({ customData: { body: 'x'.repeat(BODY_LIMIT_BYTES), fromId: 'v', toId: 'cw_x' }, messageType: 'text' }),
    headers: { 'content-type': 'application/json' },
  });
  expect(response.status).toBe(413);
  expect(response.body).toEqual({ success: false, error: `Request body is larger than ${BODY_LIMIT_BYTES} bytes`, error_code: 413 });
});
