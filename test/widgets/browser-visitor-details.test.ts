// What the widget page tells the account about its visitor, in a real headless Chromium: the
// visitor reaches a customer's page by a link, opens the chat and writes; the contact then
// shows the page they wrote from, the page they came from, their browser's language and its
// User-Agent (GET /v1/contacts/{id}). A person's reply shows the visitor the name it carries.
import type { Browser, BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { eventually, launchBrowser, openChat, serveSitePage, typeMessage, WIDGET_DEADLINE_MS, type SitePage } from '../helpers/browser.ts';
import { startTestService, type TestService } from '../helpers/service.ts';

const USER_AGENT = 'Mozilla/5.0 (X11; Linux x86_64) AcmeVisitorDetails/1.0';

let service: TestService;
let browser: Browser;
let context: BrowserContext;
let site: SitePage;
let account: { userId: string; apiKey: string };
let widgetId: string;

beforeAll(async () => {
  service = await startTestService();
  // The landing page links to the pricing page, which embeds the widget.
  site = await serveSitePage(
    (query) => `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Acme ${query.get('page') ?? 'home'}</title></head>
<body><h1>Acme</h1><a href="/?page=pricing">Pricing</a>
${query.get('page') === 'pricing' ? `<script src="${service.origin}/v1/scripts/chat-widget.js" data-widget-id="${widgetId}" async></script>` : ''}
</body></html>`,
  );
  account = await service.createAccount();
  const created = await service.request('POST', '/chat-widgets', { apiKey: account.apiKey, body: { name: 'Shop chat', settings: { allowedOrigins: [site.origin] } } });
  expect(created.status, created.text).toBe(201);
  widgetId = created.body.data.id;
  browser = await launchBrowser();
  context = await browser.newContext({ ignoreHTTPSErrors: true, locale: 'pt-BR', userAgent: USER_AGENT });
}, 120_000);

afterAll(async () => {
  await context?.close();
  await browser?.close();
  await site?.close();
  await service?.stop();
});

it("a visitor's message carries the page, where they came from and their language; the contact keeps them with the browser, and a reply's sender_name shows", async () => {
  const page = await context.newPage();
  await page.goto(`${site.origin}/?page=home`);
  await page.getByRole('link', { name: 'Pricing' }).click();
  await page.waitForURL(`${site.origin}/?page=pricing`);
  const frame = await openChat(page);
  await typeMessage(frame, 'Do you ship to Lisbon?');

  let contactId = '';
  await eventually(async () => {
    const { rows } = await service.services.pool.query<{ id: string }>('select id from contacts where chat_widget_id = $1', [widgetId]);
    contactId = rows[0]?.id ?? '';
    return contactId !== '';
  }, "the visitor's contact");
  const contact = await service.request('GET', `/v1/contacts/${contactId}`, { apiKey: account.apiKey });
  expect(contact.status, contact.text).toBe(200);
  expect(contact.body.data.widget).toEqual({
    id: widgetId,
    name: 'Shop chat',
    page_url: `${site.origin}/?page=pricing`,
    referrer: `${site.origin}/?page=home`,
    language: 'pt-BR',
    user_agent: USER_AGENT,
    first_seen_at: expect.any(String),
    last_seen_at: expect.any(String),
  });

  const answered = await service.request('POST', `/v1/contacts/${contactId}/messages`, {
    apiKey: account.apiKey,
    body: { text: 'Yes, in two days.', sender_name: 'Maria' },
  });
  expect(answered.status, answered.text).toBe(201);
  await frame.getByRole('log').getByText('Yes, in two days.').waitFor({ timeout: WIDGET_DEADLINE_MS });
  await frame.getByRole('log').getByText('Maria', { exact: true }).waitFor({ timeout: WIDGET_DEADLINE_MS });
});
