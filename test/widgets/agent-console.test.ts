// The agent console (/v1/inbox) beside the chat widget on a customer's site, in a real
// headless Chromium: the visitor's page is on another origin (a loopback site embedding the
// script tag) and the console signs in with the account's API key. Live both ways: the console
// hears the visitor typing and their message over its /trpc subscription; the visitor sees the
// agent typing and the reply (with the agent's name) over the widget's socket; the console sees
// the reply read, another visitor's new conversation, and the hand-off when the visitor asks for
// a person. Screenshots go to a temporary directory; UPDATE_SCREENSHOTS=1 writes the console's
// over README's, in widget/screenshots/.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Browser, BrowserContext, Frame, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser, serveSitePage, watchForPolicyAndScriptErrors as watchForErrors, widgetFrame, type SitePage } from '../helpers/browser.ts';
import { startTestService, type TestService } from '../helpers/service.ts';
import { contactOfVisitor, conversationEntry, conversationList, listedName, newVisitorId, visitorSays } from './console-fixtures.ts';

const UPDATE_SCREENSHOTS = process.env.UPDATE_SCREENSHOTS === '1';
const README_SCREENSHOTS = path.resolve(import.meta.dirname, '../../widget/screenshots');
const GREETING = 'Hi! A person from our team will be with you shortly.';
// Deadlines for conditions that depend on the worker, the database's notifications and the
// network on a loaded machine; never a measured time.
const DEADLINE_MS = 45_000;

let service: TestService;
let browser: Browser;
let site: SitePage;
let siteOrigin: string;
let apiKey: string;
let userId: string;
/** The name the console lists the site's visitor by. */
let firstVisitorName: string;
let widgetId: string;
let screenshots: string;

function sitePage(): string {
  return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Acme shop</title></head>
<body style="font-family: system-ui, sans-serif; margin: 0; padding: 32px">
  <h1>Acme shop</h1>
  <script src="${service.origin}/v1/scripts/chat-widget.js" data-widget-id="${widgetId}" async></script>
</body>
</html>`;
}

async function startSite(): Promise<void> {
  site = await serveSitePage(sitePage);
  siteOrigin = site.origin;
}

beforeAll(async () => {
  service = await startTestService();
  await startSite();
  const account = await service.createAccount();
  apiKey = account.apiKey;
  userId = account.userId;
  const created = await service.request('POST', '/chat-widgets', {
    apiKey,
    body: { name: 'Shop chat', settings: { title: 'Acme support', greeting: GREETING, allowedOrigins: [siteOrigin] } },
  });
  expect(created.status, created.text).toBeLessThan(300);
  widgetId = created.body.data.id;
  browser = await launchBrowser();
  screenshots = UPDATE_SCREENSHOTS ? README_SCREENSHOTS : await mkdtemp(path.join(tmpdir(), 'mapi-inbox-screenshots-'));
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await site?.close();
  await service?.stop();
  if (screenshots && !UPDATE_SCREENSHOTS) await rm(screenshots, { recursive: true, force: true });
});

describe('the agent console beside a visitor on a customer site', () => {
  let visitorContext: BrowserContext;
  let agentContext: BrowserContext;
  let visitor: Page;
  let agent: Page;
  let frame: Frame;
  let visitorErrors: string[];
  let agentErrors: string[];

  beforeAll(async () => {
    visitorContext = await browser.newContext({ ignoreHTTPSErrors: true, viewport: { width: 1000, height: 760 } });
    agentContext = await browser.newContext({ ignoreHTTPSErrors: true, viewport: { width: 1280, height: 760 } });
    visitor = await visitorContext.newPage();
    agent = await agentContext.newPage();
    visitorErrors = watchForErrors(visitor);
    agentErrors = watchForErrors(agent);
  });

  afterAll(async () => {
    await visitorContext?.close();
    await agentContext?.close();
  });

  it('serves the console under a strict Content-Security-Policy and signs in with an API key', async () => {
    const response = await agent.goto(`${service.origin}/v1/inbox`);
    const policy = response!.headers()['content-security-policy']!;
    expect(policy).toContain("default-src 'self'");
    expect(policy).toContain("script-src 'self'");
    expect(policy).toContain("frame-ancestors 'none'");
    expect(policy).not.toContain('unsafe-inline');
    await agent.getByLabel('API key or ID token').fill(apiKey);
    await agent.getByRole('button', { name: 'Sign in' }).click();
    await agent.getByRole('status').getByText('Live').waitFor({ timeout: DEADLINE_MS });
    // Kept for the tab's session only.
    expect(await agent.evaluate(() => [sessionStorage.getItem('inbox:credential'), localStorage.length])).toEqual([apiKey, 0]);
    await agent.getByText('No open conversations.').waitFor({ timeout: DEADLINE_MS });
  });

  it("lists a visitor's new conversation live, and shows the visitor typing and then their message", async () => {
    await visitor.goto(siteOrigin);
    await visitor.getByRole('button', { name: 'Open chat' }).click();
    frame = await widgetFrame(visitor, DEADLINE_MS);
    const box = frame.getByRole('textbox', { name: 'Your message' });
    await box.fill('Hello, is anyone there?');
    await box.press('Enter');
    // The bot's greeting reaches the visitor: the widget's socket is up and the bot is done.
    await frame.getByRole('log').getByText(GREETING).waitFor({ timeout: DEADLINE_MS });
    await frame.locator('#typing').waitFor({ state: 'hidden', timeout: DEADLINE_MS });

    const entry = conversationList(agent).getByRole('button').first();
    await entry.waitFor({ timeout: DEADLINE_MS });
    firstVisitorName = (await entry.locator('.name').textContent())!;
    await entry.click();
    const log = agent.getByRole('log', { name: 'Messages' });
    await log.getByText('Hello, is anyone there?').waitFor({ timeout: DEADLINE_MS });
    await log.getByText(GREETING).waitFor({ timeout: DEADLINE_MS });

    const typing = agent.getByText('Visitor is typing…');
    expect(await typing.isVisible()).toBe(false);
    await box.pressSequentially('Do you ship to Norway', { delay: 30 });
    await typing.waitFor({ state: 'visible', timeout: DEADLINE_MS });
    await box.press('Enter');
    await log.getByText('Do you ship to Norway').waitFor({ timeout: DEADLINE_MS });
    // Sending ends the typing at once (the page says so), not only when it lapses.
    await typing.waitFor({ state: 'hidden', timeout: DEADLINE_MS });
    expect(await log.getByText('Do you ship to Norway').count()).toBe(1);
  });

  it('shows the visitor the agent typing and then the reply with their name, and the console sees it read', async () => {
    const visitorTyping = frame.locator('#typing');
    await agent.getByRole('textbox', { name: 'Your name' }).fill('Ana');
    const reply = agent.getByRole('textbox', { name: 'Reply' });
    await reply.pressSequentially('Yes, we do', { delay: 30 });
    await visitorTyping.waitFor({ state: 'visible', timeout: DEADLINE_MS });
    await reply.pressSequentially(': 3 to 5 days.', { delay: 10 });
    await reply.press('Enter');
    await frame.getByRole('log').getByText('Yes, we do: 3 to 5 days.').waitFor({ timeout: DEADLINE_MS });
    await visitorTyping.waitFor({ state: 'hidden', timeout: DEADLINE_MS });
    // The visitor's open panel marks it read; the console hears the read receipt.
    const sent = agent.getByRole('log', { name: 'Messages' }).getByRole('listitem').filter({ hasText: 'Yes, we do: 3 to 5 days.' });
    await sent.getByText('Read').waitFor({ timeout: DEADLINE_MS });
    expect(await sent.count()).toBe(1);
    expect(await sent.locator('.author').textContent()).toBe('Ana');

    // Meanwhile another visitor writes: listed live, new and unread.
    const newcomerId = newVisitorId();
    await visitorSays(service, { userId }, widgetId, newcomerId, 'Hi! Can I return boots I bought online in a shop?', {
      details: { pageUrl: `${siteOrigin}/returns`, language: 'en-GB' },
    });
    const newcomer = conversationEntry(agent, await listedName(service, apiKey, await contactOfVisitor(service, newcomerId)));
    await newcomer.getByText('New', { exact: true }).waitFor({ timeout: DEADLINE_MS });
    await agent.getByRole('complementary').getByText('Chrome').waitFor({ timeout: DEADLINE_MS });
    await agent.screenshot({ path: path.join(screenshots, 'inbox.png') });
  });

  it('shows the hand-off when the visitor asks for a person', async () => {
    const visitorId = await visitor.evaluate((id) => localStorage.getItem(`chat-widget:visitor:${id}`), widgetId);
    // The widget page's "talk to a person" action: its public call, from the visitor's page.
    const status = await frame.evaluate(
      async ({ fromId, toId }) =>
        (await fetch('/v1/chat-widget-handoff', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ fromId, toId }) })).status,
      { fromId: visitorId, toId: widgetId },
    );
    expect(status).toBe(200);
    await agent.getByText('Handed off: needs a person').waitFor({ timeout: DEADLINE_MS });
    await agent.getByRole('navigation', { name: 'Conversations' }).getByText('Needs a person').waitFor({ timeout: DEADLINE_MS });
    expect(agentErrors).toEqual([]);
    expect(visitorErrors).toEqual([]);
  });
});

describe('the agent console on a phone', () => {
  it('shows the list, then one conversation with a way back, without sideways scrolling', async () => {
    const context = await browser.newContext({ ignoreHTTPSErrors: true, viewport: { width: 390, height: 844 }, hasTouch: true, isMobile: true });
    try {
      const page = await context.newPage();
      const errors = watchForErrors(page);
      await page.goto(`${service.origin}/v1/inbox`);
      await page.getByLabel('API key or ID token').fill(apiKey);
      await page.getByRole('button', { name: 'Sign in' }).click();
      const entry = conversationEntry(page, firstVisitorName);
      await entry.waitFor({ timeout: DEADLINE_MS });
      await entry.click();
      await page.getByRole('log', { name: 'Messages' }).getByText('Do you ship to Norway').waitFor({ timeout: DEADLINE_MS });
      expect(await entry.isVisible()).toBe(false);
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
      await page.getByRole('button', { name: 'Back to conversations' }).click();
      await entry.waitFor({ state: 'visible', timeout: DEADLINE_MS });
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }
  });
});
