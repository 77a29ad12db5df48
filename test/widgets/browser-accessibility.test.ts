// The chat widget for a visitor who uses the keyboard, a screen reader or a phone, in a real
// headless Chromium on a desktop and a phone screen, with a yellow brand colour (#facc15, on
// which white text is 1.53:1): readable text and icons, a labelled dialog, a text field iOS
// does not zoom into, typing announced politely, the agent's name on their replies, the
// "Talk to a person" action (and a widget that turns it off), and axe-core finding nothing
// serious or critical in the page.
import path from 'node:path';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import type { Browser, BrowserContext, Frame, Page, Request } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_HANDOFF_MESSAGE } from '../../server/widgets/hand-off-conversation.ts';
import { MINIMUM_TEXT_CONTRAST } from '../../server/widgets/widget-colours.ts';
import { DEFAULT_GREETING } from '../../server/widgets/widget-settings.ts';
import {
  focusByKeyboard,
  launchBrowser,
  openChatByKeyboard,
  SCREENS,
  seriousAccessibilityViolations,
  serveSitePage,
  textContrast,
  WIDGET_DEADLINE_MS as DEADLINE_MS,
  type SitePage,
} from '../helpers/browser.ts';
import { startTestService, type TestService } from '../helpers/service.ts';
import { storeWidgetReply, visitorContactId, type WidgetVisitor } from '../helpers/widget-replies.ts';

const YELLOW = '#facc15';
const TITLE = 'Acme support';

let service: TestService;
let browser: Browser;
let site: SitePage;
let account: { userId: string; apiKey: string };
let widgetId: string;
let quietWidgetId: string;
let artifacts: string;

beforeAll(async () => {
  service = await startTestService();
  // `?widget=` names the widget the page embeds (the one with the hand-off action by default).
  site = await serveSitePage(
    (query) => `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Acme shop</title></head>
<body style="font-family: system-ui, sans-serif; margin: 0; padding: 32px">
  <h1>Acme shop</h1>
  <script src="${service.origin}/v1/scripts/chat-widget.js" data-widget-id="${query.get('widget') === 'quiet' ? quietWidgetId : widgetId}" async></script>
</body>
</html>`,
  );
  account = await service.createAccount();
  const create = async (name: string, settings: Record<string, unknown>) => {
    const created = await service.request('POST', '/chat-widgets', {
      apiKey: account.apiKey,
      body: { name, settings: { colors: { primary: YELLOW }, allowedOrigins: [site.origin], ...settings } },
    });
    expect(created.status, created.text).toBe(201);
    return created.body.data.id as string;
  };
  widgetId = await create('Shop chat', { title: TITLE });
  quietWidgetId = await create('Quiet chat', { title: 'Quiet shop', handoffButton: false });
  browser = await launchBrowser();
  artifacts = await mkdtemp(path.join(tmpdir(), 'chat-widget-accessibility-'));
  console.log(`chat widget accessibility screenshots: ${artifacts}`);
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await site?.close();
  await service?.stop();
});

function visitorIdOf(page: Page, widget: string): Promise<string> {
  return page.evaluate((id) => localStorage.getItem(`chat-widget:visitor:${id}`) ?? '', widget);
}

/** Writes a message with the keyboard (the message box has the focus) and waits until it shows. */
async function typeByKeyboard(page: Page, frame: Frame, text: string): Promise<void> {
  await page.keyboard.type(text);
  await page.keyboard.press('Enter');
  await frame.getByRole('log').getByText(text).waitFor({ timeout: DEADLINE_MS });
}

describe.each(SCREENS)('the chat widget with a yellow brand colour, on a $name screen', ({ name, options }) => {
  let context: BrowserContext;
  let page: Page;
  let frame: Frame;
  let visitor: WidgetVisitor;

  beforeAll(async () => {
    context = await browser.newContext({ ignoreHTTPSErrors: true, ...options });
    page = await context.newPage();
  });

  afterAll(async () => {
    await context?.close();
  });

  it('draws the launcher icon in a colour readable on the brand colour', async () => {
    await page.goto(site.origin);
    const launcher = page.getByRole('button', { name: 'Open chat' });
    await page.waitForFunction(
      () => {
        const button = document.querySelector('button[aria-haspopup="dialog"]');
        return button !== null && getComputedStyle(button).backgroundColor === 'rgb(250, 204, 21)';
      },
      undefined,
      { timeout: DEADLINE_MS },
    );
    expect(await textContrast(launcher)).toBeGreaterThanOrEqual(MINIMUM_TEXT_CONTRAST);
  });

  it('opens from the keyboard as a dialog named by the widget, with a text field of at least 16 px', async () => {
    frame = await openChatByKeyboard(page);
    const dialog = page.getByRole('dialog', { name: TITLE });
    expect(await dialog.isVisible()).toBe(true);
    expect(await dialog.locator('iframe').count()).toBe(1);
    const fontSize = await frame.getByRole('textbox', { name: 'Your message' }).evaluate((element) => getComputedStyle(element).fontSize);
    expect(Number.parseFloat(fontSize)).toBeGreaterThanOrEqual(16);
  });

  it('draws every text and icon readable on the brand colour and on its bubbles', async () => {
    await typeByKeyboard(page, frame, 'Hello, do you have this in blue?');
    await frame.getByRole('log').getByText(DEFAULT_GREETING).waitFor({ timeout: DEADLINE_MS });
    visitor = { accountId: account.userId, widgetId, visitorId: await visitorIdOf(page, widgetId) };
    const readable = [
      frame.getByRole('heading', { name: TITLE }),
      frame.getByRole('button', { name: 'Close chat' }),
      frame.getByRole('button', { name: 'Send' }),
      frame.locator('.mine .bubble').first(),
      frame.locator('.theirs .bubble').first(),
      frame.getByRole('button', { name: 'Talk to a person' }),
    ];
    for (const element of readable) {
      expect(await textContrast(element), await element.evaluate((node) => node.outerHTML.slice(0, 80))).toBeGreaterThanOrEqual(MINIMUM_TEXT_CONTRAST);
    }
    // The page's own header is the brand colour.
    expect(await frame.locator('header').evaluate((element) => getComputedStyle(element).backgroundColor)).toBe('rgb(250, 204, 21)');
  });

  it('announces politely that someone is typing, and stops when they stop', async () => {
    const contactId = await visitorContactId(service, visitor);
    const typing = (on: boolean) => service.request('POST', `/contacts/${contactId}/typing`, { apiKey: account.apiKey, body: { typing: on } });
    expect((await typing(true)).status).toBe(200);
    const announced = frame.getByRole('status').filter({ hasText: `${TITLE} is typing…` });
    await announced.waitFor({ timeout: DEADLINE_MS });
    expect(await announced.getAttribute('aria-live')).toBe('polite');
    expect((await typing(false)).status).toBe(200);
    await announced.waitFor({ state: 'detached', timeout: DEADLINE_MS });
  });

  it("shows the agent's name above a reply that carries one", async () => {
    await storeWidgetReply(service, visitor, 'Yes, it comes in navy blue.', { senderName: 'Dana from Acme' });
    const reply = frame.locator('#messages li', { hasText: 'Yes, it comes in navy blue.' });
    await reply.waitFor({ timeout: DEADLINE_MS });
    const label = reply.getByText('Dana from Acme', { exact: true });
    expect(await label.isVisible()).toBe(true);
    const [labelBox, bubbleBox] = [await label.boundingBox(), await reply.locator('.bubble').boundingBox()];
    expect(labelBox!.y + labelBox!.height).toBeLessThanOrEqual(bubbleBox!.y + 1);
    expect(await textContrast(label)).toBeGreaterThanOrEqual(MINIMUM_TEXT_CONTRAST);
    // A reply without a name shows none.
    expect(await frame.locator('#messages li', { hasText: DEFAULT_GREETING }).locator('.sender').isHidden()).toBe(true);
  });

  it('has no serious or critical accessibility violation (axe-core), in the widget page or in what the script adds to the site', async () => {
    expect(await seriousAccessibilityViolations(frame)).toEqual([]);
    expect(await seriousAccessibilityViolations(page, [`#chat-widget-panel-${widgetId}`, `button[aria-controls="chat-widget-panel-${widgetId}"]`])).toEqual([]);
    await page.screenshot({ path: path.join(artifacts, `${name}.png`) });
  });

  it('hands the conversation to a person from the keyboard; the visitor sees the hand-off message, after a reload too', async () => {
    const handoff = frame.getByRole('button', { name: 'Talk to a person' });
    await focusByKeyboard(page, handoff, { backwards: true });
    const sent = page.waitForRequest((request) => request.url().includes('/v1/chat-widget-handoff'));
    const answered = page.waitForResponse((response) => response.url().includes('/v1/chat-widget-handoff'));
    await page.keyboard.press('Enter');
    const request: Request = await sent;
    expect(request.method()).toBe('POST');
    expect(request.postDataJSON()).toEqual({ fromId: visitor.visitorId, toId: widgetId });
    expect((await answered).status()).toBe(200);
    await frame.getByRole('log').getByText(DEFAULT_HANDOFF_MESSAGE).waitFor({ timeout: DEADLINE_MS });
    const { rows } = await service.services.pool.query('select is_bot_active from contacts where id = $1', [await visitorContactId(service, visitor)]);
    expect(rows).toEqual([{ is_bot_active: false }]);

    await page.reload();
    frame = await openChatByKeyboard(page);
    await frame.getByRole('log').getByText(DEFAULT_HANDOFF_MESSAGE).waitFor({ timeout: DEADLINE_MS });
    expect(await frame.getByRole('log').getByText(DEFAULT_HANDOFF_MESSAGE).count()).toBe(1);
  });

  it('offers no "Talk to a person" when the widget turns it off', async () => {
    const quiet = await context.newPage();
    try {
      await quiet.goto(`${site.origin}/?widget=quiet`);
      const quietFrame = await openChatByKeyboard(quiet);
      await typeByKeyboard(quiet, quietFrame, 'Just browsing, thanks');
      // The configuration has been applied (its title shows) and the visitor has a conversation (the greeting came).
      await quietFrame.getByRole('heading', { name: 'Quiet shop' }).waitFor({ timeout: DEADLINE_MS });
      await quietFrame.getByRole('log').getByText(DEFAULT_GREETING).waitFor({ timeout: DEADLINE_MS });
      expect(await quietFrame.getByRole('button', { name: 'Talk to a person' }).count()).toBe(0);
    } finally {
      await quiet.close();
    }
  });
});
