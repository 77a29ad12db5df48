// A user the site signed in, on a laptop and a phone (two browsers with their own storage, so
// two anonymous visitor ids): one contact and one conversation, each device seeing what the
// other writes; and a second message the bot does not answer still says it was delivered.
import { randomUUID } from 'node:crypto';
import { SignJWT } from 'jose';
import type { Browser, BrowserContext, Frame } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_GREETING } from '../../server/widgets/widget-settings.ts';
import { eventually, launchBrowser, openChat, serveSitePage, typeMessage, WIDGET_DEADLINE_MS, type SitePage } from '../helpers/browser.ts';
import { startTestService, type TestService } from '../helpers/service.ts';

const DELIVERED = 'Delivered — we’ll reply here.';

let service: TestService;
let browser: Browser;
let site: SitePage;
let siteOrigin: string;
let userId: string;
let widgetId: string;
let identitySecret: string;

/** The customer's site: the embed script with the token its back end signed for the signed-in user. */
async function startSite(): Promise<void> {
  site = await serveSitePage((query) => {
    const token = query.get('token') ?? '';
    const tag = /^[\w.-]+$/.test(token) ? ` data-identity-token="${token}"` : '';
    return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Acme account</title></head>
<body><h1>Acme account</h1>
<script src="${service.origin}/v1/scripts/chat-widget.js" data-widget-id="${widgetId}"${tag} async></script>
</body></html>`;
  });
  siteOrigin = site.origin;
}

/** What the site's back end does for its signed-in user: an HS256 JWT keyed by the widget's secret. */
async function tokenFor(sub: string): Promise<string> {
  return new SignJWT({ sub, name: 'Dana' })
    .setProtectedHeader({ alg: 'HS256' })
    .setIssuedAt()
    .setExpirationTime('1h')
    .sign(new TextEncoder().encode(identitySecret));
}

async function laptop(): Promise<BrowserContext> {
  return browser.newContext({ ignoreHTTPSErrors: true, viewport: { width: 1366, height: 820 } });
}

async function phone(): Promise<BrowserContext> {
  return browser.newContext({ ignoreHTTPSErrors: true, viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true, deviceScaleFactor: 3 });
}

async function visitorIdOf(frame: Frame): Promise<string | null> {
  return frame.page().evaluate((widget) => localStorage.getItem(`chat-widget:visitor:${widget}`), widgetId);
}

beforeAll(async () => {
  service = await startTestService();
  await startSite();
  const account = await service.createAccount();
  userId = account.userId;
  // No away message: the bot's only reply is the greeting to the first message.
  const created = await service.request('POST', '/chat-widgets', {
    apiKey: account.apiKey,
    body: { name: 'Account chat', settings: { title: 'Acme support', allowedOrigins: [siteOrigin], identityVerification: 'required' } },
  });
  expect(created.status, created.text).toBe(201);
  widgetId = created.body.data.id;
  const issued = await service.request('POST', `/chat-widgets/${widgetId}/identity-secret`, { apiKey: account.apiKey });
  expect(issued.status, issued.text).toBe(200);
  identitySecret = issued.body.data.identity_secret;
  browser = await launchBrowser();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await site?.close();
  await service?.stop();
});

describe('a verified user on two devices', () => {
  it("shares one conversation between laptop and phone, live both ways, on one contact; an unanswered second message says it was delivered", async () => {
    const sub = `user-${randomUUID()}`;
    const onLaptop = await laptop();
    const onPhone = await phone();
    try {
      const laptopPage = await onLaptop.newPage();
      await laptopPage.goto(`${siteOrigin}/?token=${await tokenFor(sub)}`);
      const laptopChat = await openChat(laptopPage);
      await typeMessage(laptopChat, 'Where is my order 1042?');
      await laptopChat.getByRole('log').getByText(DEFAULT_GREETING).waitFor({ timeout: WIDGET_DEADLINE_MS });
      const delivered = laptopChat.getByRole('status').filter({ hasText: DELIVERED });
      // The greeting answered the first message: nothing to say about delivery.
      expect(await delivered.count()).toBe(0);

      // Within ten minutes of the greeting the bot stays quiet; the page says the message arrived.
      await typeMessage(laptopChat, 'It was due on Monday.');
      await delivered.waitFor({ timeout: WIDGET_DEADLINE_MS });
      expect(await laptopChat.locator('#typing').isHidden()).toBe(true);

      const phonePage = await onPhone.newPage();
      await phonePage.goto(`${siteOrigin}/?token=${await tokenFor(sub)}`);
      const phoneChat = await openChat(phonePage);
      const phoneLog = phoneChat.getByRole('log');
      await phoneLog.getByText('Where is my order 1042?').waitFor({ timeout: WIDGET_DEADLINE_MS });
      await phoneLog.getByText('It was due on Monday.').waitFor({ timeout: WIDGET_DEADLINE_MS });
      await phoneLog.getByText(DEFAULT_GREETING).waitFor({ timeout: WIDGET_DEADLINE_MS });
      // Two browsers, two anonymous ids: the conversation is the user's, not the browser's.
      const ids = [await visitorIdOf(laptopChat), await visitorIdOf(phoneChat)];
      expect(ids[0]).toBeTruthy();
      expect(ids[1]).toBeTruthy();
      expect(ids[0]).not.toBe(ids[1]);

      await typeMessage(phoneChat, 'Sent from my phone');
      await laptopChat.getByRole('log').getByText('Sent from my phone').waitFor({ timeout: WIDGET_DEADLINE_MS });
      await typeMessage(laptopChat, 'And this from the laptop');
      await phoneLog.getByText('And this from the laptop').waitFor({ timeout: WIDGET_DEADLINE_MS });

      const { rows } = await service.services.pool.query<{ id: string; widget_visitor_id: string }>(
        'select id, widget_visitor_id from contacts where account_id = $1 and chat_widget_id = $2',
        [userId, widgetId],
      );
      expect(rows.map((row) => row.widget_visitor_id)).toEqual([`sub:${sub}`]);
      await eventually(async () => {
        const stored = await service.services.pool.query<{ body: string }>(
          'select body from messages where contact_id = $1 order by created_at, id',
          [rows[0]!.id],
        );
        return stored.rows.map((row) => row.body).join('|') === ['Where is my order 1042?', DEFAULT_GREETING, 'It was due on Monday.', 'Sent from my phone', 'And this from the laptop'].join('|');
      }, "the contact holds both devices' messages and the greeting");
    } finally {
      await onLaptop.close();
      await onPhone.close();
    }
  });
});
