// The files a website embeds or links to, over real HTTPS: the embed script with its
// ETag revalidation, the widget page (and its 404 text/plain), the page's security headers,
// and the messaging-app click-to-chat page.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChatWidget } from '../../server/db/entities/index.ts';
import { startTestService, type TestService } from '../helpers/service.ts';

let service: TestService;
let userId: string;

/** A widget stored directly, so these tests need nothing but the pages themselves. */
async function storeWidget(id: string, settings: Record<string, unknown>) {
  const em = service.services.orm.em.fork();
  em.create(ChatWidget, { id, account: userId, name: 'Support', settings, otpSecretSealed: 'unused' });
  await em.flush();
}

beforeAll(async () => {
  service = await startTestService();
  ({ userId } = await service.createAccount());
  await storeWidget('cw_pages_open', { title: 'Help' });
  await storeWidget('cw_pages_limited', { allowedOrigins: ['https://shop.example.com', 'http://127.0.0.1:8123/path', 'not a url', "https://x.example; script-src *"] });
});

afterAll(async () => {
  await service?.stop();
});

describe('GET /scripts/chat-widget.js', () => {
  it('answers 200 application/javascript with a strong ETag and a 5-minute public cache', async () => {
    const response = await service.request('GET', '/scripts/chat-widget.js');
    expect(response.status).toBe(200);
    expect(response.contentType).toMatch(/^application\/javascript/);
    expect(response.headers.get('cache-control')).toBe('public, max-age=300');
    expect(response.headers.get('etag')).toMatch(/^"[A-Za-z0-9_-]+"$/);
    expect(response.text).toContain('data-widget-id');
  });

  it('answers 304 with no body when If-None-Match names the current ETag, and 200 for another', async () => {
    const first = await service.request('GET', '/scripts/chat-widget.js');
    const etag = first.headers.get('etag')!;
    const again = await service.request('GET', '/scripts/chat-widget.js', { headers: { 'if-none-match': `"old", ${etag}` } });
    expect(again.status).toBe(304);
    expect(again.text).toBe('');
    expect(again.headers.get('etag')).toBe(etag);
    const stale = await service.request('GET', '/scripts/chat-widget.js', { headers: { 'if-none-match': '"old"' } });
    expect(stale.status).toBe(200);
    expect(stale.text).toBe(first.text);
    // `*` names no ETag received earlier, so it is not one the document promises a 304 for.
    const any = await service.request('GET', '/scripts/chat-widget.js', { headers: { 'if-none-match': '*' } });
    expect(any.status).toBe(200);
    expect(any.text).toBe(first.text);
  });

  it('serves the page assets the same way', async () => {
    for (const name of ['page.js', 'page.css', 'click-to-chat.css']) {
      const response = await service.request('GET', `/chat-widget-assets/${name}`);
      expect(response.status, name).toBe(200);
      const again = await service.request('GET', `/chat-widget-assets/${name}`, { headers: { 'if-none-match': response.headers.get('etag')! } });
      expect(again.status, name).toBe(304);
    }
  });

  it('serves every module the widget page loads, and every module those import, as JavaScript', async () => {
    const page = await service.request('GET', '/chat-widget/cw_pages_open');
    const loaded = [...page.text.matchAll(/<(?:script type="module" src|link rel="modulepreload" href)="\/v1\/chat-widget-assets\/([\w.-]+)"/g)].map((match) => match[1]!);
    expect(loaded).toContain('page.js');
    const imported = new Set<string>();
    for (const name of loaded) {
      const response = await service.request('GET', `/chat-widget-assets/${name}`);
      expect(response.status, name).toBe(200);
      expect(response.contentType, name).toMatch(/^application\/javascript/);
      expect(response.headers.get('cache-control'), name).toBe('public, max-age=300');
      for (const match of response.text.matchAll(/^import .* from '\.\/([\w.-]+)';$/gm)) imported.add(match[1]!);
    }
    // Preloaded, so that the browser fetches them all at once rather than one import level at a time.
    expect([...imported].filter((name) => !loaded.includes(name))).toEqual([]);
  });
});

describe('GET /chat-widget/{configId}', () => {
  it('answers 200 text/html with the widget id, and the security headers', async () => {
    const response = await service.request('GET', '/chat-widget/cw_pages_open');
    expect(response.status).toBe(200);
    expect(response.contentType).toMatch(/^text\/html/);
    expect(response.text).toContain('data-config-id="cw_pages_open"');
    expect(response.text).toContain('role="log"');
    expect(response.headers.get('x-content-type-options')).toBe('nosniff');
    expect(response.headers.get('referrer-policy')).toBe('no-referrer');
    const policy = response.headers.get('content-security-policy')!;
    expect(policy).toContain("default-src 'self'");
    expect(policy).toContain("script-src 'self'");
    expect(policy).toContain("style-src 'self'");
    expect(policy).toContain(`connect-src 'self' wss://127.0.0.1:${service.port}`);
    // No allowedOrigins: any site may embed it.
    expect(policy).toContain('frame-ancestors *');
  });

  it("lets only the widget's allowed origins frame it, ignoring entries that are not origins", async () => {
    const response = await service.request('GET', '/chat-widget/cw_pages_limited');
    const policy = response.headers.get('content-security-policy')!;
    expect(policy.split('; ').find((directive) => directive.startsWith('frame-ancestors'))).toBe(
      "frame-ancestors 'self' https://shop.example.com http://127.0.0.1:8123",
    );
    // The same origins are the parents whose postMessage may hand the page its visitor id.
    expect(response.text).toContain(`data-parent-origins="&#39;self&#39; https://shop.example.com http://127.0.0.1:8123"`);
  });

  it('puts the fromId path segment (a tracking source, never the visitor) in the page HTML-escaped', async () => {
    const response = await service.request('GET', `/chat-widget/cw_pages_open/${encodeURIComponent('"><script>alert(1)</script>')}`);
    expect(response.status).toBe(200);
    expect(response.text).not.toContain('<script>alert(1)');
    expect(response.text).toContain('data-from-id="&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;"');
    const visitor = await service.request('GET', '/chat-widget/cw_pages_open/visitor_0123456789');
    expect(visitor.text).toContain('data-from-id="visitor_0123456789"');
  });

  it('answers 404 text/plain for an unknown widget, with or without fromId', async () => {
    for (const path of ['/chat-widget/cw_nope', '/chat-widget/cw_nope/visitor_0123456789', `/chat-widget/${'x'.repeat(99)}`]) {
      const response = await service.request('GET', path);
      expect(response.status, path).toBe(404);
      expect(response.contentType, path).toMatch(/^text\/plain/);
      expect(response.text).toBe('Chat widget not found');
    }
  });
});

describe('GET /whatsapp-widget/{phone}', () => {
  it('links to a WhatsApp chat with the number in E.164 digits', async () => {
    const response = await service.request('GET', `/whatsapp-widget/${encodeURIComponent('+1 (415) 555-2671')}`);
    expect(response.status).toBe(200);
    expect(response.contentType).toMatch(/^text\/html/);
    expect(response.text).toContain('href="https://wa.me/14155552671"');
    expect(response.text).toContain('+14155552671');
    expect(response.headers.get('x-content-type-options')).toBe('nosniff');
    expect(response.headers.get('content-security-policy')).toContain("default-src 'none'");
  });

  it('takes digits alone as the number after +', async () => {
    const response = await service.request('GET', '/whatsapp-widget/447911123456');
    expect(response.status).toBe(200);
    expect(response.text).toContain('href="https://wa.me/447911123456"');
  });

  it('pre-fills the message URL-encoded in the link and shows it HTML-escaped', async () => {
    const message = 'Hi <b>there</b> & "you"/ünïcode?x=1#frag';
    const response = await service.request('GET', `/whatsapp-widget/+14155552671/${encodeURIComponent(message)}`);
    expect(response.status).toBe(200);
    const href = /class="open" href="([^"]+)"/.exec(response.text)![1]!;
    // The attribute is HTML-escaped; unescaped, it is the wa.me URL with the text URL-encoded.
    const url = new URL(href.replace(/&amp;/g, '&'));
    expect(url.origin + url.pathname).toBe('https://wa.me/14155552671');
    expect(url.searchParams.get('text')).toBe(message);
    expect(response.text).not.toContain('<b>there</b>');
    expect(response.text).toContain('Hi &lt;b&gt;there&lt;/b&gt; &amp; &quot;you&quot;/ünïcode?x=1#frag');
  });

  it('accepts a message longer than a path parameter may be', async () => {
    const message = 'word '.repeat(60).trim();
    const response = await service.request('GET', `/whatsapp-widget/+14155552671/${encodeURIComponent(message)}`);
    expect(response.status).toBe(200);
    expect(response.text).toContain(`text=${encodeURIComponent(message)}`);
  });

  it('answers an invalid number with a 400 HTML page that says so, escaping what was sent', async () => {
    for (const phone of ['12', '+1 555 0000 0000 0000', '<img src=x onerror=alert(1)>', 'abc']) {
      const response = await service.request('GET', `/whatsapp-widget/${encodeURIComponent(phone)}/hello`);
      expect(response.status, phone).toBe(400);
      expect(response.contentType, phone).toMatch(/^text\/html/);
      expect(response.text).toContain('is not a valid phone number');
      expect(response.text).not.toContain('<img');
      expect(response.text).not.toContain('wa.me');
    }
  });
});
