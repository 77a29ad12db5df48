// "Every HTML page the service serves (`/v1/docs` included) carries a Content-Security-Policy
// and `X-Content-Type-Options: nosniff`, and may not be framed by other sites, except the
// widget page, which the widget's allowed origins frame." Over real HTTPS, each page kind;
// every other answer (plain text above all) says nosniff too; and the docs page still works
// under its policy in a real browser.
import { connect as tlsConnect } from 'node:tls';
import type { Browser } from 'playwright-core';
import { fetch } from 'undici';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { launchBrowser, watchForPolicyAndScriptErrors } from '../helpers/browser.ts';
import { serviceForFile, type TestAccount } from '../helpers/service-for-file.ts';
import { insecureAgent, type ApiResponse, type TestService } from '../helpers/service.ts';

let service: TestService;
let account: TestAccount;
serviceForFile({ accounts: [{}] }, (started) => {
  service = started.service;
  [account] = started.accounts as [TestAccount];
});

let browser: Browser;
beforeAll(async () => {
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
});

function directives(response: ApiResponse): Map<string, string> {
  const policy = response.headers.get('content-security-policy');
  expect(policy, 'Content-Security-Policy').toBeTruthy();
  return new Map(policy!.split(';').map((directive) => directive.trim().split(/\s+(.*)/s).slice(0, 2) as [string, string]));
}

async function widget(settings: Record<string, unknown>): Promise<string> {
  const created = await service.request('POST', '/chat-widgets', { apiKey: account.apiKey, body: { name: 'Site', settings } });
  expect(created.status).toBe(201);
  return created.body.data.id;
}

test('every HTML page kind carries a CSP and nosniff; none may be framed by other sites but the widget page, which its allowed origins frame', async () => {
  const pages = {
    '/docs': await service.request('GET', '/docs'),
    '/inbox': await service.request('GET', '/inbox', { unchecked: true }),
    '/whatsapp-widget/{phone}': await service.request('GET', '/whatsapp-widget/14155552671'),
    '/whatsapp-widget/{phone}/{message}': await service.request('GET', '/whatsapp-widget/14155552671/hello'),
    '/whatsapp-widget/{phone} (invalid number)': await service.request('GET', '/whatsapp-widget/not-a-number'),
  };
  const limited = await service.request('GET', `/chat-widget/${await widget({ allowedOrigins: ['https://shop.example.com'] })}`);
  const open = await service.request('GET', `/chat-widget/${await widget({})}`);
  for (const [page, response] of Object.entries({ ...pages, '/chat-widget/{configId}': limited, '/chat-widget/{configId} (any site)': open })) {
    expect(response.contentType, page).toMatch(/^text\/html/);
    expect(response.headers.get('x-content-type-options'), page).toBe('nosniff');
    expect(directives(response).get('script-src') ?? directives(response).get('default-src'), page).not.toContain('unsafe');
  }
  for (const [page, response] of Object.entries(pages)) {
    expect(directives(response).get('frame-ancestors'), page).toBe("'none'");
    expect(response.headers.get('x-frame-options'), page).toBe('DENY');
  }
  // X-Frame-Options cannot name origins: a DENY or SAMEORIGIN there would override the list.
  for (const response of [limited, open]) expect(response.headers.get('x-frame-options')).toBeNull();
  expect(directives(limited).get('frame-ancestors')).toBe("'self' https://shop.example.com");
  expect(directives(open).get('frame-ancestors')).toBe('*');
});

test('plain-text answers, routing failures, JSON, scripts and Socket.IO answers all say nosniff', async () => {
  const answers: Record<string, ApiResponse> = {
    'plain-text 401 naming no key': await service.request('GET', '/contacts', { unchecked: true }),
    'plain-text 404 of an unknown widget': await service.request('GET', '/chat-widget/cw_none'),
    'no route': await service.request('GET', '/no-such-path', { unchecked: true }),
    'a path fastify cannot decode': await service.request('GET', '/contacts/%zz', { unchecked: true }),
    'JSON': await service.request('GET', '/lists', { apiKey: account.apiKey }),
    'health': await service.request('GET', '/health'),
    'the docs script': await service.request('GET', '/docs/init.js', { unchecked: true }),
  };
  expect(answers['plain-text 401 naming no key']!.contentType).toMatch(/^text\/plain/);
  for (const [what, response] of Object.entries(answers)) expect(response.headers.get('x-content-type-options'), what).toBe('nosniff');

  // Socket.IO answers its long-polling requests itself, outside fastify's replies.
  const polling = await fetch(`${service.origin}/socket.io/?EIO=4&transport=polling`, { dispatcher: insecureAgent });
  await polling.arrayBuffer();
  expect(polling.headers.get('x-content-type-options')).toBe('nosniff');

  // A request Node's parser refuses is answered on the raw socket.
  const raw = await new Promise<string>((resolve, reject) => {
    const socket = tlsConnect({ host: '127.0.0.1', port: service.port, rejectUnauthorized: false }, () => socket.write('GET /v1/health HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n'));
    let text = '';
    socket.on('data', (chunk) => (text += chunk.toString('latin1')));
    socket.on('end', () => resolve(text));
    socket.on('error', reject);
  });
  expect(raw).toMatch(/^HTTP\/1\.1 400 /);
  expect(raw).toMatch(/\r\nX-Content-Type-Options: nosniff\r\n/i);
});

test('the docs page renders the API in a real browser with no Content-Security-Policy refusal', async () => {
  const context = await browser.newContext({ ignoreHTTPSErrors: true });
  try {
    const page = await context.newPage();
    const errors = watchForPolicyAndScriptErrors(page);
    // The browser's own report of each refusal, besides what it logs.
    await page.addInitScript(() => {
      const seen: string[] = ((window as unknown as { violations: string[] }).violations = []);
      document.addEventListener('securitypolicyviolation', (event) => seen.push(`${event.violatedDirective} ${event.blockedURI}`));
    });
    const response = await page.goto(`${service.origin}/v1/docs`);
    expect(response!.headers()['content-security-policy']).toContain("default-src 'none'");
    // Swagger UI has fetched the document and drawn its operations; an operation opens.
    await page.locator('.opblock-summary-path', { hasText: '/api-keys/usage' }).first().click();
    await page.locator('.opblock-body').first().waitFor();
    expect(await page.evaluate(() => (window as unknown as { violations: string[] }).violations)).toEqual([]);
    expect(errors).toEqual([]);
  } finally {
    await context.close();
  }
});
