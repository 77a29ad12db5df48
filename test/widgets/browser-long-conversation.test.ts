// A returning chat-widget visitor with a long conversation, in a real headless Chromium on a
// desktop and a phone screen, keyboard only: the launcher's badge counts the reply that came
// while the chat was closed, the chat opens at that newest reply, earlier messages are loaded
// from the server on demand, each day has its heading, and axe-core finds nothing serious.
// What shows after a reload is what the server holds.
import { randomBytes } from 'node:crypto';
import type { Browser, BrowserContext, Frame, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordMessage } from '../../server/messages/record-message.ts';
import { WIDGET_CHANNEL } from '../../server/widgets/find-or-create-visitor.ts';
import { CONVERSATION_PAGE_SIZE } from '../../server/widgets/list-conversation-messages.ts';
import {
  eventually,
  focusByKeyboard,
  isFocused,
  launchBrowser,
  openChatByKeyboard,
  SCREENS,
  seriousAccessibilityViolations,
  serveSitePage,
  widgetFrame,
  WIDGET_DEADLINE_MS as DEADLINE_MS,
  type SitePage,
} from '../helpers/browser.ts';
import { startTestService, type TestService } from '../helpers/service.ts';
import { storeWidgetReply, visitorContactId, type WidgetVisitor } from '../helpers/widget-replies.ts';

// More than a page, so that some are only loaded on demand.
const HISTORY = 240;
const FIRST_QUESTION = 'Where is my parcel? I ordered it last week.';
const NEWEST_REPLY = 'Your parcel arrives tomorrow before noon.';

let service: TestService;
let browser: Browser;
let site: SitePage;
let userId: string;
let widgetId: string;

beforeAll(async () => {
  service = await startTestService();
  site = await serveSitePage(
    () => `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Acme shop</title></head>
<body style="font-family: system-ui, sans-serif; margin: 0; padding: 32px">
  <h1>Acme shop</h1>
  <script src="${service.origin}/v1/scripts/chat-widget.js" data-widget-id="${widgetId}" async></script>
</body>
</html>`,
  );
  const account = await service.createAccount();
  userId = account.userId;
  const created = await service.request('POST', '/chat-widgets', {
    apiKey: account.apiKey,
    body: { name: 'Shop chat', settings: { title: 'Acme support', allowedOrigins: [site.origin] } },
  });
  expect(created.status, created.text).toBe(201);
  widgetId = created.body.data.id;
  browser = await launchBrowser();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await site?.close();
  await service?.stop();
});

/**
 * A visitor who wrote through the public endpoint (the greeting answered), then HISTORY more
 * messages both ways, the conversation spread back over five days, the newest an hour ago.
 */
async function visitorWithHistory(): Promise<WidgetVisitor> {
  const visitor = { accountId: userId, widgetId, visitorId: randomBytes(16).toString('hex') };
  const sent = await service.request('POST', '/incoming-chat-widget-message', {
    query: { userId },
    body: { messageType: 'text', customData: { body: FIRST_QUESTION, fromId: visitor.visitorId, toId: widgetId } },
  });
  expect(sent.status, sent.text).toBe(200);
  const contactId = await visitorContactId(service, visitor);
  await service.services.orm.em.fork().transactional(async (em) => {
    for (let n = 1; n <= HISTORY; n += 1) {
      const body = `Message ${String(n).padStart(3, '0')} of the conversation`;
      await recordMessage(em, userId, { contactId, direction: n % 2 ? 'inbound' : 'outbound', body, channel: WIDGET_CHANNEL, sender: n % 2 ? null : 'agent' });
    }
  });
  await service.services.pool.query(
    `update messages m set created_at = now() - interval '1 hour' - (ordered.n - 1) * interval '30 minutes'
       from (select id, row_number() over (order by created_at desc, id desc) as n from messages where contact_id = $1) ordered
      where m.id = ordered.id`,
    [contactId],
  );
  // Nothing unread yet: the badge will count the reply that comes while the chat is closed.
  await service.services.pool.query(`update messages set status = 'read' where contact_id = $1 and direction <> 'inbound'`, [contactId]);
  return visitor;
}

/** The conversation as the server holds it, oldest first: body and UTC day. */
async function storedConversation(visitor: WidgetVisitor): Promise<{ body: string; day: string }[]> {
  const { rows } = await service.services.pool.query<{ body: string; day: string }>(
    `select body, to_char(created_at at time zone 'UTC', 'YYYY-MM-DD') as day from messages where contact_id = $1 order by created_at, id`,
    [await visitorContactId(service, visitor)],
  );
  return rows;
}

/** A browser that already holds this visitor (the embed script's storage on the site). */
async function returningVisitorBrowser(visitor: WidgetVisitor, options: object): Promise<BrowserContext> {
  const context = await browser.newContext({ ignoreHTTPSErrors: true, timezoneId: 'UTC', locale: 'en-US', ...options });
  await context.addInitScript(
    ({ origin, widget, id }) => {
      if (location.origin !== origin) return;
      localStorage.setItem(`chat-widget:visitor:${widget}`, id);
      localStorage.setItem(`chat-widget:started:${widget}`, '1');
    },
    { origin: site.origin, widget: widgetId, id: visitor.visitorId },
  );
  return context;
}

/** Whether the message's bubble lies wholly within the conversation's visible part. */
function inView(frame: Frame, body: string): Promise<boolean> {
  return frame.evaluate((text) => {
    const box = document.getElementById('conversation')!.getBoundingClientRect();
    const bubble = [...document.querySelectorAll('#messages .bubble')].find((element) => element.textContent === text);
    if (!bubble) return false;
    const rect = bubble.getBoundingClientRect();
    return rect.height > 0 && rect.top >= box.top - 1 && rect.bottom <= box.bottom + 1;
  }, body);
}

/** The list as shown: day headings and message bodies, in order. */
function shownList(frame: Frame): Promise<({ day: string } | { body: string })[]> {
  return frame.locator('#messages > li').evaluateAll((items) =>
    items.map((item) => (item.classList.contains('day') ? { day: item.textContent ?? '' } : { body: item.querySelector('.bubble')?.textContent ?? '' })),
  );
}

function bubbles(frame: Frame): Promise<string[]> {
  return frame.locator('#messages li .bubble').allInnerTexts();
}

/** Reloads the site and waits until its hidden widget page has read the conversation. */
async function reloadSite(page: Page): Promise<Frame> {
  await page.reload();
  const frame = await widgetFrame(page);
  await frame.locator('#messages .bubble', { hasText: NEWEST_REPLY }).waitFor({ state: 'attached', timeout: DEADLINE_MS });
  return frame;
}

describe.each(SCREENS)('a returning visitor with a long conversation, on a $name screen', ({ options }) => {
  let visitor: WidgetVisitor;
  let context: BrowserContext;
  let page: Page;
  let frame: Frame;
  let stored: { body: string; day: string }[];
  const reads: URLSearchParams[] = [];

  beforeAll(async () => {
    visitor = await visitorWithHistory();
    context = await returningVisitorBrowser(visitor, options);
    page = await context.newPage();
    page.on('request', (request) => {
      if (request.url().includes('/v1/chat-widget-messages?')) reads.push(new URL(request.url()).searchParams);
    });
  }, 120_000);

  afterAll(async () => {
    await context?.close();
  });

  it("counts the reply that came while the chat was closed on the launcher's badge and in its name", async () => {
    await page.goto(site.origin);
    // The page loads hidden for a visitor with a conversation, and reads its newest messages.
    frame = await widgetFrame(page);
    await frame.locator('#messages .bubble', { hasText: `Message ${HISTORY} of the conversation` }).waitFor({ state: 'attached', timeout: DEADLINE_MS });
    expect(reads[0]!.get('before')).toMatch(/^\d+$/);
    expect(reads[0]!.has('after')).toBe(false);

    await storeWidgetReply(service, visitor, NEWEST_REPLY);
    const launcher = page.getByRole('button', { name: 'Open chat, 1 unread message' });
    await launcher.waitFor({ timeout: DEADLINE_MS });
    const badge = launcher.locator('span');
    expect(await badge.isVisible()).toBe(true);
    expect(await badge.innerText()).toBe('1');
  });

  it('opens from the keyboard at that newest reply, in a dialog named by the widget, and so again after a reload, as the server has it', async () => {
    await openChatByKeyboard(page);
    await eventually(() => inView(frame, NEWEST_REPLY), 'the newest reply is in view');
    expect(await page.getByRole('dialog', { name: 'Acme support' }).isVisible()).toBe(true);
    // The newest page, not the oldest: the first question waits behind "Load earlier messages".
    stored = await storedConversation(visitor);
    expect(stored).toHaveLength(HISTORY + 3);
    expect(await bubbles(frame)).toEqual(stored.slice(-(CONVERSATION_PAGE_SIZE + 1)).map((message) => message.body));
    expect(await frame.getByRole('button', { name: 'Load earlier messages' }).isVisible()).toBe(true);

    // Escape closes the chat; the reply was read, so the launcher counts nothing.
    await page.keyboard.press('Escape');
    const launcher = page.getByRole('button', { name: 'Open chat', exact: true });
    await launcher.waitFor({ timeout: DEADLINE_MS });
    expect(await launcher.locator('span').isHidden()).toBe(true);

    // After a reload, as the server has it: nothing unread, opened at the newest reply again.
    frame = await reloadSite(page);
    expect(await launcher.isVisible()).toBe(true);
    expect(await launcher.locator('span').isHidden()).toBe(true);
    await openChatByKeyboard(page);
    await eventually(() => inView(frame, NEWEST_REPLY), 'the newest reply is in view after a reload');
  });

  it('loads earlier messages from the server from the keyboard, above what the visitor reads, which stays in place', async () => {
    // Back from the message box to the button.
    const loadEarlier = frame.getByRole('button', { name: 'Load earlier messages' });
    await focusByKeyboard(page, loadEarlier, { backwards: true });
    const oldestShown = (await bubbles(frame))[0]!;
    const topOf = () => frame.locator('#messages .bubble', { hasText: oldestShown }).evaluate((element) => element.getBoundingClientRect().top);
    const topBefore = await topOf();
    const answered = page.waitForResponse((response) => response.url().includes('/v1/chat-widget-messages?') && response.url().includes('before='));
    await page.keyboard.press('Enter');
    expect((await answered).status()).toBe(200);
    await frame.getByRole('log').getByText(FIRST_QUESTION).waitFor({ state: 'attached', timeout: DEADLINE_MS });
    expect(Math.abs((await topOf()) - topBefore)).toBeLessThan(2);
    // All of it now, once each and in the server's order; nothing more to load, and the focus
    // stays in the conversation, which the keyboard scrolls.
    expect(await bubbles(frame)).toEqual(stored.map((message) => message.body));
    await loadEarlier.waitFor({ state: 'hidden', timeout: DEADLINE_MS });
    expect(await isFocused(frame.locator('#conversation'))).toBe(true);
    expect(await frame.getByRole('status').filter({ hasText: 'earlier messages loaded' }).count()).toBe(1);
  });

  it('puts a heading before the first message of each day, and nowhere else', async () => {
    const dayOf = new Map(stored.map((message) => [message.body, message.day]));
    const headings: { label: string; day: string }[] = [];
    let heading: string | null = null;
    let day: string | null = null;
    for (const item of await shownList(frame)) {
      if ('day' in item) {
        expect(heading).toBeNull();
        heading = item.day;
        continue;
      }
      const messageDay = dayOf.get(item.body)!;
      if (messageDay !== day) {
        expect(heading, `a heading before ${item.body}`).not.toBeNull();
        headings.push({ label: heading!, day: messageDay });
      } else {
        expect(heading, `no heading before ${item.body}`).toBeNull();
      }
      day = messageDay;
      heading = null;
    }
    expect(new Set(stored.map((message) => message.day)).size).toBe(headings.length);
    expect(headings.length).toBeGreaterThanOrEqual(5);
    expect(headings.at(-1)).toEqual({ label: 'Today', day: new Date().toISOString().slice(0, 10) });
    expect(headings.at(-2)!.label).toBe('Yesterday');
    for (const { label, day: date } of headings.slice(0, -2)) {
      expect(label).toContain(new Date(`${date}T12:00:00Z`).toLocaleDateString('en-US', { weekday: 'long', timeZone: 'UTC' }));
    }
    expect(await frame.getByRole('heading', { level: 2 }).count()).toBe(headings.length);
  });

  it('has no serious or critical accessibility violation (axe-core)', async () => {
    expect(await seriousAccessibilityViolations(frame)).toEqual([]);
  });
});
