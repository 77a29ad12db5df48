// Chat widget configuration (contract: /chat-widgets CRUD "as lists") and the public
// configuration a widget page reads (spec: GET /chat-widget-config).
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startTestService, type TestService } from '../helpers/service.ts';

let service: TestService;
beforeAll(async () => {
  service = await startTestService();
});
afterAll(async () => {
  await service?.stop();
});

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const SETTINGS = {
  title: 'Talk to us',
  colors: { primary: '#1a73e8', background: '#ffffff', text: '#202124' },
  greeting: 'Hello! How can we help?',
  awayMessage: 'We are away right now.',
  position: 'bottom-left',
  allowedOrigins: ['https://site.example', 'http://127.0.0.1:8080'],
};

describe('POST/GET/PUT/DELETE /chat-widgets', () => {
  test('creating a widget answers 201 {success, data: {id, name, settings, created_at}} with a cw_ configId', async () => {
    const { apiKey } = await service.createAccount();
    const created = await service.request('POST', '/chat-widgets', { apiKey, body: { name: 'Main site', settings: SETTINGS } });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      success: true,
      data: { id: expect.stringMatching(/^cw_[0-9a-z]{26}$/), name: 'Main site', settings: SETTINGS, created_at: expect.stringMatching(ISO), updated_at: expect.stringMatching(ISO) },
    });
    const secret = await service.services.pool.query('select otp_secret_sealed from chat_widgets where id = $1', [created.body.data.id]);
    // Stored sealed, never as the base32 secret itself.
    expect(secret.rows[0].otp_secret_sealed).not.toMatch(/^[A-Z2-7]+=*$/);
  });

  test('name is required and settings are validated (colours as CSS hex, origins without a path)', async () => {
    const { apiKey } = await service.createAccount();
    const cases: [unknown, RegExp][] = [
      [{}, /name is required/],
      [{ name: '  ' }, /name/],
      [{ name: 'x', settings: { colors: { primary: 'blue' } } }, /settings\.colors\.primary.*hex/],
      [{ name: 'x', settings: { allowedOrigins: ['https://site.example/path'] } }, /settings\.allowedOrigins\.0/],
      [{ name: 'x', settings: { allowedOrigins: ['http://site.example'] } }, /settings\.allowedOrigins\.0/],
      [{ name: 'x', settings: { position: 'top' } }, /settings\.position/],
      [{ name: 'x', settings: { greeting: 'a'.repeat(1001) } }, /settings\.greeting/],
      [{ name: 'x', settings: { handoffButton: 'no' } }, /settings\.handoffButton.*true or false/],
      [{ name: 'x', settings: { unknown: 1 } }, /settings/],
    ];
    for (const [body, message] of cases) {
      const response = await service.request('POST', '/chat-widgets', { apiKey, body });
      expect(response.status, JSON.stringify(body)).toBe(400);
      expect(response.body.error, JSON.stringify(body)).toMatch(message);
    }
  });

  test('list, get, update and delete; another account\'s widget is 404', async () => {
    const owner = await service.createAccount();
    const other = await service.createAccount();
    const first = (await service.request('POST', '/chat-widgets', { apiKey: owner.apiKey, body: { name: 'First' } })).body.data;
    const second = (await service.request('POST', '/chat-widgets', { apiKey: owner.apiKey, body: { name: 'Second', settings: SETTINGS } })).body.data;

    const listed = await service.request('GET', '/chat-widgets', { apiKey: owner.apiKey });
    expect(listed.status).toBe(200);
    expect(listed.body).toEqual({ success: true, data: [second, first] });
    expect((await service.request('GET', '/chat-widgets', { apiKey: other.apiKey })).body).toEqual({ success: true, data: [] });

    const got = await service.request('GET', `/chat-widgets/${first.id}`, { apiKey: owner.apiKey });
    expect(got.body).toEqual({ success: true, data: first });

    const updated = await service.request('PUT', `/chat-widgets/${first.id}`, { apiKey: owner.apiKey, body: { name: 'Renamed', settings: { greeting: 'Hi' } } });
    expect(updated.status).toBe(200);
    expect(updated.body.data).toMatchObject({ id: first.id, name: 'Renamed', settings: { greeting: 'Hi' } });
    expect((await service.request('PUT', `/chat-widgets/${first.id}`, { apiKey: owner.apiKey, body: {} })).status).toBe(400);

    for (const [method, path] of [['GET', `/chat-widgets/${first.id}`], ['PUT', `/chat-widgets/${first.id}`], ['DELETE', `/chat-widgets/${first.id}`], ['GET', `/chat-widgets/${first.id}/otp`]] as const) {
      const response = await service.request(method, path, { apiKey: other.apiKey, body: method === 'PUT' ? { name: 'Stolen' } : undefined });
      expect(response.status, `${method} ${path}`).toBe(404);
      expect(response.body, `${method} ${path}`).toEqual({ success: false, error: 'Chat widget not found', error_code: 404 });
    }

    const deleted = await service.request('DELETE', `/chat-widgets/${first.id}`, { apiKey: owner.apiKey });
    expect(deleted.status).toBe(200);
    expect(deleted.body).toEqual({ success: true });
    expect((await service.request('GET', `/chat-widgets/${first.id}`, { apiKey: owner.apiKey })).status).toBe(404);
    expect((await service.request('DELETE', `/chat-widgets/${first.id}`, { apiKey: owner.apiKey })).status).toBe(404);
    expect((await service.request('GET', '/chat-widget-config', { query: { configId: first.id } })).status).toBe(404);
  });
});

describe('GET /chat-widget-config', () => {
  test('200 {success, data} with what the page needs (owner id as userId) and never the secret', async () => {
    const { apiKey, userId } = await service.createAccount();
    const widget = (await service.request('POST', '/chat-widgets', { apiKey, body: { name: 'Shop', settings: SETTINGS } })).body.data;
    const response = await service.request('GET', '/chat-widget-config', { query: { configId: widget.id } });
    expect(response.status).toBe(200);
    expect(response.contentType).toMatch(/^application\/json/);
    expect(response.body).toEqual({
      success: true,
      data: {
        id: widget.id,
        userId,
        name: 'Shop',
        title: 'Talk to us',
        colors: SETTINGS.colors,
        // The text on each colour, readable on it: the widget's own text colour on its background.
        foreground: { primary: '#ffffff', visitorBubble: '#ffffff', botBubble: '#202124', background: '#202124', muted: '#6b7280' },
        greeting: SETTINGS.greeting,
        position: 'bottom-left',
        handoffButton: true,
      },
    });
    const { rows } = await service.services.pool.query('select otp_secret_sealed from chat_widgets where id = $1', [widget.id]);
    const secret = service.services.secrets.unseal(rows[0].otp_secret_sealed);
    expect(response.text).not.toContain(secret);
    expect(response.text).not.toContain(rows[0].otp_secret_sealed);
  });

  test('defaults: the name as title, bottom-right, no greeting, the hand-off action offered', async () => {
    const { apiKey } = await service.createAccount();
    const widget = (await service.request('POST', '/chat-widgets', { apiKey, body: { name: 'Plain' } })).body.data;
    const response = await service.request('GET', '/chat-widget-config', { query: { configId: widget.id } });
    expect(response.body.data).toMatchObject({ title: 'Plain', colors: {}, greeting: null, position: 'bottom-right', handoffButton: true });
  });

  test('settings.handoffButton false turns the "Talk to a person" action off; a light brand colour gets dark text', async () => {
    const { apiKey } = await service.createAccount();
    const settings = { handoffButton: false, colors: { primary: '#facc15' } };
    const widget = (await service.request('POST', '/chat-widgets', { apiKey, body: { name: 'Quiet', settings } })).body.data;
    expect(widget.settings).toEqual(settings);
    const response = await service.request('GET', '/chat-widget-config', { query: { configId: widget.id } });
    expect(response.body.data).toMatchObject({ handoffButton: false, foreground: { primary: '#111827', visitorBubble: '#111827' } });
  });

  test('an unknown configId is 404 {success:false, error}', async () => {
    const response = await service.request('GET', '/chat-widget-config', { query: { configId: 'cw_unknown' } });
    expect(response.status).toBe(404);
    expect(response.body).toEqual({ success: false, error: 'Chat widget not found' });
  });

  test('a site outside allowedOrigins is 403; this service and listed sites are not', async () => {
    const { apiKey } = await service.createAccount();
    const widget = (await service.request('POST', '/chat-widgets', { apiKey, body: { name: 'Shop', settings: SETTINGS } })).body.data;
    const query = { configId: widget.id };
    const foreign = await service.request('GET', '/chat-widget-config', { query, headers: { origin: 'https://evil.example' } });
    expect(foreign.status).toBe(403);
    expect(foreign.body).toEqual({ success: false, error: 'This site may not use the chat widget' });
    expect((await service.request('GET', '/chat-widget-config', { query, headers: { origin: 'https://site.example' } })).status).toBe(200);
    expect((await service.request('GET', '/chat-widget-config', { query, headers: { origin: service.origin } })).status).toBe(200);
  });

  test('X-Forwarded-Host names this service only when it comes from a TRUST_PROXY address', async () => {
    const { apiKey } = await service.createAccount();
    const widget = (await service.request('POST', '/chat-widgets', { apiKey, body: { name: 'Shop', settings: SETTINGS } })).body.data;
    const request = { query: { configId: widget.id }, headers: { origin: 'https://public.example', 'x-forwarded-host': 'public.example' } };
    const elsewhere = await startTestService({ databaseUrl: service.databaseUrl, env: { TRUST_PROXY: '10.9.8.7' } });
    const here = await startTestService({ databaseUrl: service.databaseUrl, env: { TRUST_PROXY: '127.0.0.1' } });
    try {
      // From 127.0.0.1, which is not the proxy, the header is the client's own claim: a foreign site.
      expect((await elsewhere.request('GET', '/chat-widget-config', request)).status).toBe(403);
      // From the proxy, it is the host the browser addressed: this service's own widget page.
      expect((await here.request('GET', '/chat-widget-config', request)).status).toBe(200);
    } finally {
      await elsewhere.stop();
      await here.stop();
    }
  });

  test('is readable by a listed site (the embed script draws its launcher from it), with Vary: Origin', async () => {
    const { apiKey } = await service.createAccount();
    const widget = (await service.request('POST', '/chat-widgets', { apiKey, body: { name: 'Shop', settings: SETTINGS } })).body.data;
    const listed = await service.request('GET', '/chat-widget-config', { query: { configId: widget.id }, headers: { origin: 'https://site.example' } });
    expect(listed.status).toBe(200);
    expect(listed.headers.get('access-control-allow-origin')).toBe('https://site.example');
    expect(listed.headers.get('vary')).toMatch(/origin/i);
    // Without an Origin (a server, or the page itself) there is nothing to allow.
    const plain = await service.request('GET', '/chat-widget-config', { query: { configId: widget.id } });
    expect(plain.headers.get('access-control-allow-origin')).toBeNull();
  });
});
