// The chat widget as a website's visitor meets it, in a real headless Chromium: a customer
// site on its own origin embeds the one script tag; the visitor opens the chat, sends a
// message, gets the automatic reply without reloading, misses nothing while offline, and
// finds the whole conversation after a reload. Its screenshots go to a temporary directory;
// UPDATE_SCREENSHOTS=1 writes them over README's, in widget/screenshots/.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordMessage } from '../../server/messages/record-message.ts';
import { publishConversationEvent } from '../../server/realtime/publish-conversation-events.ts';
import { conversationMessageOf } from '../../server/widgets/conversation-message.ts';
import { WIDGET_CHANNEL } from '../../server/widgets/find-or-create-visitor.ts';
import { launchBrowser, serveSitePage, watchForPolicyAndScriptErrors as watchForErrors, widgetFrame, type SitePage } from '../helpers/browser.ts';
import { startTestService, type TestService } from '../helpers/service.ts';

const UPDATE_SCREENSHOTS = process.env.UPDATE_SCREENSHOTS === '1';
const README_SCREENSHOTS = path.resolve(import.meta.dirname, '../../widget/screenshots');
const GREETING = 'Hi! Thanks for your message, we will be right with you.';
const AWAY = 'We are away right now and will answer as soon as we are back.';
const TITLE = 'Acme support';
// Deadlines for conditions that depend on the worker and the network; never a measured time.
const DEADLINE_MS = 30_000;

let service: TestService;
let browser: Browser;
let site: SitePage;
let siteOrigin: string;
let userId: string;
let widgetId: string;
let screenshots: string;

/** The customer's site: plain HTML on another origin with the one tag the README shows. */
function sitePage(): string {
  return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Acme shop</title></head>
<body style="font-family: system-ui, sans-serif; margin: 0; padding: 32px; background: #fafafa">
  <script>window.__globalsBefore = Object.keys(window);</script>
  <h1>Acme shop</h1>
  <p>Hand-made goods, shipped worldwide. Questions? Use the chat button.</p>
  <script src="${service.origin}/v1/scripts/chat-widget.js" data-widget-id="${widgetId}" async></script>
</body>
</html>`;
}

async function startSite(): Promise<void> {
  site = await serveSitePage(sitePage);
  siteOrigin = site.origin;
}

async function visitorContact(): Promise<{ contactId: string; visitorId: string }> {
  const { rows } = await service.services.pool.query<{ id: string; widget_visitor_id: string }>(
    'select id, widget_visitor_id from contacts where account_id = $1 and chat_widget_id = $2',
    [userId, widgetId],
  );
  expect(rows).toHaveLength(1);
  return { contactId: rows[0]!.id, visitorId: rows[0]!.widget_visitor_id };
}

/** A reply stored by the domain while the visitor is away: the message and its live event, in one transaction. */
async function storeReply(body: string): Promise<void> {
  const { contactId, visitorId } = await visitorContact();
  await service.services.orm.em.fork().transactional(async (em) => {
    const recorded = await recordMessage(em, userId, { contactId, direction: 'outbound', body, channel: WIDGET_CHANNEL, sender: 'agent' });
    await em.flush();
    const message = conversationMessageOf(recorded.message);
    await publishConversationEvent(em, { kind: 'message', accountId: userId, widgetId, visitorId, contactId, message });
  });
}

beforeAll(async () => {
  service = await startTestService();
  await startSite();
  const account = await service.createAccount();
  userId = account.userId;
  const created = await service.request('POST', '/chat-widgets', {
    apiKey: account.apiKey,
    body: {
      name: 'Shop chat',
      settings: {
        title: TITLE,
        greeting: GREETING,
        awayMessage: AWAY,
        position: 'bottom-right',
        colors: { primary: '#0f766e', background: '#ffffff', text: '#111827' },
        allowedOrigins: [siteOrigin],
      },
    },
  });
  expect(created.status, created.text).toBeLessThan(300);
  widgetId = created.body.data.id;
  browser = await launchBrowser();
  screenshots = UPDATE_SCREENSHOTS ? README_SCREENSHOTS : await mkdtemp(path.join(tmpdir(), 'mapi-screenshots-'));
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await site?.close();
  await service?.stop();
  if (screenshots && !UPDATE_SCREENSHOTS) await rm(screenshots, { recursive: true, force: true });
});

describe('the chat widget embedded in a customer site', () => {
  let context: BrowserContext;
  let page: Page;
  let errors: string[];

  beforeAll(async () => {
    context = await browser.newContext({ ignoreHTTPSErrors: true, viewport: { width: 1280, height: 800 } });
    page = await context.newPage();
    errors = watchForErrors(page);
  });

  afterAll(async () => {
    await context?.close();
  });

  it('adds a launcher button and no globals but window.chatWidget and its alias window.ChatWidget', async () => {
    await page.goto(siteOrigin);
    const launcher = page.getByRole('button', { name: 'Open chat' });
    await launcher.waitFor({ timeout: DEADLINE_MS });
    const added = await page.evaluate(() =>
      Object.keys(window).filter((key) => key !== '__globalsBefore' && !(window as any).__globalsBefore.includes(key)),
    );
    expect(added.sort()).toEqual(['ChatWidget', 'chatWidget']);
    const box = (await launcher.boundingBox())!;
    // bottom-right
    expect(box.x).toBeGreaterThan(1280 / 2);
    expect(box.y).toBeGreaterThan(800 / 2);
  });

  it('opens the widget page in a titled 380x600 iframe when the launcher is clicked', async () => {
    await page.getByRole('button', { name: 'Open chat' }).click();
    const iframe = page.locator('iframe');
    await iframe.waitFor({ timeout: DEADLINE_MS });
    expect(await iframe.getAttribute('title')).toBeTruthy();
    const box = (await iframe.boundingBox())!;
    expect([Math.round(box.width), Math.round(box.height)]).toEqual([380, 600]);
    expect(await page.getByRole('button', { name: 'Close chat' }).getAttribute('aria-expanded')).toBe('true');
    const frame = await widgetFrame(page);
    await frame.getByRole('heading', { name: TITLE }).waitFor({ timeout: DEADLINE_MS });
  });

  it('shows a sent message in the log and the automatic reply without reloading', async () => {
    const frame = await widgetFrame(page);
    let navigations = 0;
    page.on('framenavigated', () => (navigations += 1));
    const box = frame.getByRole('textbox', { name: 'Your message' });
    await box.fill('Hello, do you ship to Norway?');
    await box.press('Enter');
    const log = frame.getByRole('log');
    await log.getByText('Hello, do you ship to Norway?').waitFor({ timeout: DEADLINE_MS });
    expect(await box.inputValue()).toBe('');
    await log.getByText(new RegExp(`${escapeRegExp(GREETING)}|${escapeRegExp(AWAY)}`)).first().waitFor({ timeout: DEADLINE_MS });
    expect(navigations).toBe(0);
  });

  it('keeps Shift+Enter as a new line rather than sending', async () => {
    const frame = await widgetFrame(page);
    const box = frame.getByRole('textbox', { name: 'Your message' });
    await box.fill('first line');
    await box.press('Shift+Enter');
    await box.pressSequentially('second line');
    expect(await box.inputValue()).toBe('first line\nsecond line');
    await box.fill('');
  });

  it('gets a reply stored while the browser was offline once it is back online', async () => {
    const frame = await widgetFrame(page);
    await context.setOffline(true);
    await frame.getByText('Offline').waitFor({ timeout: DEADLINE_MS });
    await storeReply('Yes, we ship to Norway. Delivery takes 3 to 5 days.');
    // Stored and announced, but the page is offline: it can only get it by asking again once back.
    expect(await frame.getByRole('log').getByText('Yes, we ship to Norway').count()).toBe(0);
    await context.setOffline(false);
    await frame.getByRole('log').getByText('Yes, we ship to Norway. Delivery takes 3 to 5 days.').waitFor({ timeout: DEADLINE_MS });
  });

  it('shows the whole conversation after a reload, reopened from the keyboard', async () => {
    await page.reload();
    const launcher = page.getByRole('button', { name: 'Open chat' });
    await launcher.waitFor({ timeout: DEADLINE_MS });
    await launcher.focus();
    await page.keyboard.press('Enter');
    const frame = await widgetFrame(page);
    const log = frame.getByRole('log');
    await log.getByText('Yes, we ship to Norway. Delivery takes 3 to 5 days.').waitFor({ timeout: DEADLINE_MS });
    await log.getByText('Hello, do you ship to Norway?').waitFor({ timeout: DEADLINE_MS });
    await page.screenshot({ path: path.join(screenshots, 'desktop.png') });
    const texts = await log.locator('li').allInnerTexts();
    // Each message once, in the order they were written.
    const question = texts.findIndex((text) => text.includes('Hello, do you ship to Norway?'));
    const answer = texts.findIndex((text) => text.includes('Yes, we ship to Norway'));
    expect(question).toBeGreaterThanOrEqual(0);
    expect(answer).toBeGreaterThan(question);
    expect(texts.filter((text) => text.includes('Hello, do you ship to Norway?'))).toHaveLength(1);
    expect(texts.filter((text) => text.includes('Yes, we ship to Norway'))).toHaveLength(1);
    // Escape closes the panel and gives focus back to the launcher.
    await frame.getByRole('textbox', { name: 'Your message' }).press('Escape');
    await page.getByRole('button', { name: 'Open chat' }).waitFor({ timeout: DEADLINE_MS });
    expect(errors).toEqual([]);
  });

  it('shows a 429 as a friendly notice and gives the text back', async () => {
    const visitorId = await page.evaluate((id) => localStorage.getItem(`chat-widget:visitor:${id}`), widgetId);
    expect(visitorId).toMatch(/^[A-Za-z0-9_-]{22,}$/);
    await page.getByRole('button', { name: 'Open chat' }).click();
    const frame = await widgetFrame(page);
    const box = frame.getByRole('textbox', { name: 'Your message' });
    // Twice at most: the per-minute window may turn between spending the budget and the page's send.
    for (let attempt = 0; attempt < 2; attempt += 1) {
      // The visitor's budget, spent through the public endpoint as a script on the site could.
      let status = 200;
      while (status !== 429) {
        const sent = await service.request('POST', '/incoming-chat-widget-message', {
          query: { userId },
          body: { messageType: 'text', customData: { body: 'flood', fromId: visitorId, toId: widgetId } },
        });
        expect([200, 429]).toContain(sent.status);
        status = sent.status;
      }
      await box.fill('Can I pay by invoice?');
      const answered = page.waitForResponse((response) => response.url().includes('/incoming-chat-widget-message'));
      await box.press('Enter');
      if ((await answered).status() === 429) break;
    }
    const notice = frame.getByRole('alert');
    await notice.getByText('You are sending messages a little too quickly').waitFor({ timeout: DEADLINE_MS });
    expect(await box.inputValue()).toBe('Can I pay by invoice?');
    expect(await frame.getByRole('log').getByText('Can I pay by invoice?').count()).toBe(0);
  });
});

describe('the chat widget on a phone', () => {
  it('opens full screen at 360x740 and is usable there', async () => {
    const context = await browser.newContext({ ignoreHTTPSErrors: true, viewport: { width: 360, height: 740 }, hasTouch: true, isMobile: true });
    try {
      const page = await context.newPage();
      const errors = watchForErrors(page);
      await page.goto(siteOrigin);
      await page.getByRole('button', { name: 'Open chat' }).click();
      const iframe = page.locator('iframe');
      await iframe.waitFor({ timeout: DEADLINE_MS });
      const box = (await iframe.boundingBox())!;
      expect([Math.round(box.x), Math.round(box.y), Math.round(box.width), Math.round(box.height)]).toEqual([0, 0, 360, 740]);
      const frame = await widgetFrame(page);
      const text = frame.getByRole('textbox', { name: 'Your message' });
      await text.fill('Do you have gift wrapping?');
      await frame.getByRole('button', { name: 'Send' }).click();
      const log = frame.getByRole('log');
      await log.getByText('Do you have gift wrapping?').waitFor({ timeout: DEADLINE_MS });
      await log.getByText(new RegExp(`${escapeRegExp(GREETING)}|${escapeRegExp(AWAY)}`)).first().waitFor({ timeout: DEADLINE_MS });
      // Nothing wider than the screen: no sideways scrolling in the widget.
      expect(await frame.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(360);
      await page.screenshot({ path: path.join(screenshots, 'phone.png') });
      // The page's own close button closes the full-screen panel.
      await frame.getByRole('button', { name: 'Close chat' }).click();
      await page.getByRole('button', { name: 'Open chat' }).waitFor({ timeout: DEADLINE_MS });
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }
  });
});

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
