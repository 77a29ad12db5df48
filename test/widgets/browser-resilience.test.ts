// The chat widget's visitors in a real headless Chromium, on a customer site served from
// another origin: whose conversation a page shows (never one named by a link), nothing
// lost when the network drops, tabs that stay in step with one sound, the unread count the
// site can read, and a launcher that looks right before it is first opened.
// Screenshots go to a temporary directory (printed), never into the repository.
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Browser, BrowserContext, Frame, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordMessage } from '../../server/messages/record-message.ts';
import { publishConversationEvent } from '../../server/realtime/publish-conversation-events.ts';
import { conversationMessageOf } from '../../server/widgets/conversation-message.ts';
import { DEFAULT_GREETING } from '../../server/widgets/widget-settings.ts';
import { WIDGET_CHANNEL } from '../../server/widgets/find-or-create-visitor.ts';
import { eventually, launchBrowser, openChat, serveSitePage, typeMessage as type, WIDGET_DEADLINE_MS, type SitePage } from '../helpers/browser.ts';
import { startTestService, type TestService } from '../helpers/service.ts';

const DEADLINE_MS = WIDGET_DEADLINE_MS;
const PRIMARY = '#b91c1c';

let service: TestService;
let browser: Browser;
let site: SitePage;
let siteOrigin: string;
let userId: string;
let widgetId: string;
let artifacts: string;

/** `?token=` puts a site-signed identity token on the tag (data-identity-token). */
function sitePage(token: string | null): string {
  return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Acme shop</title></head>
<body style="font-family: system-ui, sans-serif; margin: 0; padding: 32px">
  <h1>Acme shop</h1>
  <script src="${service.origin}/v1/scripts/chat-widget.js" data-widget-id="${widgetId}"${token ? ` data-identity-token="${token}"` : ''} async></script>
</body>
</html>`;
}

async function startSite(): Promise<void> {
  site = await serveSitePage((query) => {
    const token = query.get('token');
    return sitePage(token && /^[\w.-]+$/.test(token) ? token : null);
  });
  siteOrigin = site.origin;
}

/** A visitor's browser: counts the notification sound's Audio.play calls in every frame (window.__plays). */
async function newVisitor(): Promise<BrowserContext> {
  const context = await browser.newContext({ ignoreHTTPSErrors: true, viewport: { width: 1280, height: 800 } });
  await context.addInitScript(() => {
    const counted = window as unknown as { __plays: number };
    counted.__plays = 0;
    const play = HTMLMediaElement.prototype.play;
    HTMLMediaElement.prototype.play = function (this: HTMLMediaElement) {
      counted.__plays += 1;
      return play.call(this);
    };
  });
  return context;
}

/** Script errors, console errors (a 404 included) of the site and the widget. */
function watchForErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error') errors.push(message.text());
  });
  page.on('pageerror', (error) => errors.push(error.message));
  return errors;
}

async function bubbles(frame: Frame | Page): Promise<string[]> {
  return frame.locator('#messages li .bubble').allInnerTexts();
}

async function visitorIdOf(page: Page): Promise<string> {
  const id = await siteStored(page, 'visitor');
  expect(id).toBeTruthy();
  return id!;
}

/** What the embed script keeps for this widget in the site's storage (`visitor`, `started`, `outbox`). */
function siteStored(page: Page, name: 'visitor' | 'started' | 'outbox'): Promise<string | null> {
  return page.evaluate(({ key }) => localStorage.getItem(key), { key: `chat-widget:${name}:${widgetId}` });
}

/** The widget's send endpoint, as a route pattern for holding back or refusing its calls. */
function sendsPattern(): string {
  return `${service.origin}/v1/incoming-chat-widget-message*`;
}

async function contactOf(visitorId: string): Promise<string> {
  const { rows } = await service.services.pool.query<{ id: string }>(
    'select id from contacts where account_id = $1 and chat_widget_id = $2 and widget_visitor_id = $3',
    [userId, widgetId, visitorId],
  );
  expect(rows).toHaveLength(1);
  return rows[0]!.id;
}

async function storedBodies(visitorId: string): Promise<string[]> {
  const { rows } = await service.services.pool.query<{ body: string }>(
    `select m.body from messages m join contacts c on c.id = m.contact_id
      where c.account_id = $1 and c.chat_widget_id = $2 and c.widget_visitor_id = $3 order by m.created_at, m.id`,
    [userId, widgetId, visitorId],
  );
  return rows.map((row) => row.body);
}

/** The conversation as the public endpoint reads it back, oldest first. */
async function conversation(visitorId: string): Promise<string[]> {
  const response = await service.request('GET', '/chat-widget-messages', { query: { fromId: visitorId, toId: widgetId } });
  expect(response.status, response.text).toBe(200);
  return (response.body.messages as { body: string }[]).map((message) => message.body);
}

/** A reply from the owner's side, stored through the domain's writer with its live event, in one transaction. */
async function storeReply(visitorId: string, body: string): Promise<void> {
  const contactId = await contactOf(visitorId);
  await service.services.orm.em.fork().transactional(async (em) => {
    const recorded = await recordMessage(em, userId, { contactId, direction: 'outbound', body, channel: WIDGET_CHANNEL, sender: 'agent' });
    await em.flush();
    const message = conversationMessageOf(recorded.message);
    await publishConversationEvent(em, { kind: 'message', accountId: userId, widgetId, visitorId, contactId, message });
  });
}

/** Sends the first message and waits for the greeting, so that every later reply is the test's own. */
async function startConversation(page: Page, text: string): Promise<Frame> {
  const frame = await openChat(page);
  await type(frame, text);
  await frame.getByRole('log').getByText(DEFAULT_GREETING).waitFor({ timeout: DEADLINE_MS });
  return frame;
}

beforeAll(async () => {
  service = await startTestService();
  await startSite();
  const account = await service.createAccount();
  userId = account.userId;
  // No greeting set (the default one answers a first message) and no away message: the only
  // other replies are the test's own.
  const created = await service.request('POST', '/chat-widgets', {
    apiKey: account.apiKey,
    body: {
      name: 'Shop chat',
      settings: { title: 'Acme support', position: 'bottom-left', colors: { primary: PRIMARY }, allowedOrigins: [siteOrigin] },
    },
  });
  expect(created.status, created.text).toBeLessThan(300);
  widgetId = created.body.data.id;
  browser = await launchBrowser();
  artifacts = await mkdtemp(path.join(tmpdir(), 'chat-widget-screens-'));
  console.log(`chat widget screenshots: ${artifacts}`);
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await site?.close();
  await service?.stop();
});

describe('the chat widget for a new visitor', () => {
  it("shows the launcher in the widget's colour and corner before it is opened, and asks for no conversation before the first message", async () => {
    const context = await newVisitor();
    try {
      const page = await context.newPage();
      const errors = watchForErrors(page);
      const conversationReads: number[] = [];
      page.on('response', (response) => {
        if (response.url().includes('/chat-widget-messages')) conversationReads.push(response.status());
      });
      await page.goto(siteOrigin);
      const launcher = page.getByRole('button', { name: 'Open chat' });
      await launcher.waitFor({ timeout: DEADLINE_MS });
      await page.waitForFunction(
        () => {
          const button = document.querySelector('button[aria-label="Open chat"]');
          return button !== null && getComputedStyle(button).backgroundColor === 'rgb(185, 28, 28)';
        },
        undefined,
        { timeout: DEADLINE_MS },
      );
      const box = (await launcher.boundingBox())!;
      expect(box.x).toBeLessThan(1280 / 2);
      expect(await page.locator('iframe').count()).toBe(0);
      await page.screenshot({ path: path.join(artifacts, 'launcher-before-open.png') });

      const frame = await openChat(page);
      await type(frame, 'Hello, is anyone there?');
      await frame.getByRole('log').getByText(DEFAULT_GREETING).waitFor({ timeout: DEADLINE_MS });
      // No 404 for a conversation that did not exist yet, and no error in the console.
      expect(conversationReads.filter((status) => status !== 200)).toEqual([]);
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }
  });
});

describe('a link naming another visitor', () => {
  it("opened in a browser on its own shows neither that visitor's conversation nor writes into it", async () => {
    const victim = await newVisitor();
    const attacker = await newVisitor();
    try {
      const victimPage = await victim.newPage();
      await victimPage.goto(siteOrigin);
      await startConversation(victimPage, 'My order number is 4711 and my address is secret');
      const victimId = await visitorIdOf(victimPage);

      const page = await attacker.newPage();
      const requested: string[] = [];
      page.on('request', (request) => requested.push(request.url()));
      const link = `${service.origin}/v1/chat-widget/${widgetId}/${victimId}`;
      await page.goto(link);
      await page.getByRole('heading', { name: 'Acme support' }).waitFor({ timeout: DEADLINE_MS });
      const box = page.getByRole('textbox', { name: 'Your message' });
      await box.fill('Written through a link');
      await box.press('Enter');
      // Its own conversation: the greeting answers the link page's first message.
      await page.getByRole('log').getByText(DEFAULT_GREETING).waitFor({ timeout: DEADLINE_MS });
      expect(await page.getByRole('log').getByText('My order number').count()).toBe(0);
      // Nothing after the page itself named the victim's id: no read, no write, no socket for it.
      expect(requested.filter((url) => url !== link && url.includes(victimId))).toEqual([]);
      expect(await storedBodies(victimId)).not.toContain('Written through a link');
      const { rows } = await service.services.pool.query<{ widget_visitor_id: string }>(
        `select c.widget_visitor_id from messages m join contacts c on c.id = m.contact_id where c.chat_widget_id = $1 and m.body = $2`,
        [widgetId, 'Written through a link'],
      );
      expect(rows).toHaveLength(1);
      expect(rows[0]!.widget_visitor_id).not.toBe(victimId);

      // The fragment the embed script frames the page with changes nothing for a page opened on its own.
      const again = await attacker.newPage();
      const requestedAgain: string[] = [];
      again.on('request', (request) => requestedAgain.push(request.url()));
      await again.goto(`${link}#embed`);
      // The attacker's own conversation, from its own storage.
      await again.getByRole('log').getByText('Written through a link').waitFor({ timeout: DEADLINE_MS });
      expect(await again.getByRole('log').getByText('My order number').count()).toBe(0);
      expect(requestedAgain.filter((url) => url !== link && url.includes(victimId))).toEqual([]);
    } finally {
      await victim.close();
      await attacker.close();
    }
  });
});

describe('a visitor on a bad network', () => {
  it('sees the two messages typed offline and the reply written meanwhile exactly once each, in order, once back', async () => {
    const context = await newVisitor();
    try {
      const page = await context.newPage();
      const errors = watchForErrors(page);
      await page.goto(siteOrigin);
      const frame = await startConversation(page, 'Do you ship to Norway?');
      const visitorId = await visitorIdOf(page);

      await context.setOffline(true);
      await frame.getByText('Offline').waitFor({ timeout: DEADLINE_MS });
      await type(frame, 'Second question, typed offline');
      await type(frame, 'Third question, typed offline');
      await storeReply(visitorId, 'Yes, we ship to Norway.');
      expect(await frame.getByRole('log').getByText('Yes, we ship to Norway.').count()).toBe(0);
      await context.setOffline(false);

      const expected = ['Second question, typed offline', 'Third question, typed offline', 'Yes, we ship to Norway.'];
      // The page holds exactly what the server holds, in the server's order.
      await eventually(async () => {
        const server = await conversation(visitorId);
        return expected.every((body) => server.includes(body)) && JSON.stringify(await bubbles(frame)) === JSON.stringify(server);
      }, 'the page shows the conversation the server holds');
      const shown = await bubbles(frame);
      for (const body of expected) expect(shown.filter((text) => text === body)).toHaveLength(1);
      expect(shown.indexOf('Second question, typed offline')).toBeLessThan(shown.indexOf('Third question, typed offline'));
      // Stored once each.
      const stored = await storedBodies(visitorId);
      for (const body of expected) expect(stored.filter((text) => text === body)).toHaveLength(1);
      await page.screenshot({ path: path.join(artifacts, 'after-reconnect.png') });
      expect(errors.filter((text) => !/ERR_INTERNET_DISCONNECTED|WebSocket/.test(text))).toEqual([]);
    } finally {
      await context.close();
    }
  });
});

describe('two tabs of one visitor', () => {
  it('show the same conversation and only one of them plays the sound for a reply', async () => {
    const context = await newVisitor();
    try {
      const first = await context.newPage();
      await first.goto(siteOrigin);
      const firstFrame = await startConversation(first, 'Hello from the first tab');
      const visitorId = await visitorIdOf(first);

      const second = await context.newPage();
      await second.goto(siteOrigin);
      const secondFrame = await openChat(second);
      await secondFrame.getByRole('log').getByText('Hello from the first tab').waitFor({ timeout: DEADLINE_MS });
      await type(secondFrame, 'Written in the second tab');
      await firstFrame.getByRole('log').getByText('Written in the second tab').waitFor({ timeout: DEADLINE_MS });

      const plays = async () => (await firstFrame.evaluate(() => (window as any).__plays)) + (await secondFrame.evaluate(() => (window as any).__plays));
      const before = await plays();
      await storeReply(visitorId, 'One reply, one sound');
      await firstFrame.getByRole('log').getByText('One reply, one sound').waitFor({ timeout: DEADLINE_MS });
      await secondFrame.getByRole('log').getByText('One reply, one sound').waitFor({ timeout: DEADLINE_MS });
      expect((await plays()) - before).toBe(1);
      expect(await bubbles(firstFrame)).toEqual(await bubbles(secondFrame));
    } finally {
      await context.close();
    }
  });
});

/** Listens as the site would (window.chatWidget.onUnreadCountChange); answers the last count heard. */
async function watchUnreadCount(page: Page): Promise<() => Promise<number | undefined>> {
  await page.waitForFunction(() => typeof (window as any).chatWidget?.onUnreadCountChange === 'function', undefined, { timeout: DEADLINE_MS });
  await page.evaluate(() => {
    const counts: number[] = [];
    (window as any).__unread = counts;
    (window as any).chatWidget.onUnreadCountChange((count: number) => counts.push(count));
  });
  return () => page.evaluate(() => ((window as any).__unread as number[]).at(-1));
}

describe('the unread count', () => {
  it('reaches the site through window.chatWidget.onUnreadCountChange while the chat is closed, and drops to 0 when it is opened', async () => {
    const context = await newVisitor();
    try {
      const page = await context.newPage();
      await page.goto(siteOrigin);
      await startConversation(page, 'Please call me back');
      const visitorId = await visitorIdOf(page);

      // A later page view: the chat stays closed.
      await page.reload();
      const lastCount = await watchUnreadCount(page);
      await storeReply(visitorId, 'We will call you at 3 pm');
      await eventually(async () => (await lastCount()) === 1, 'the unread count is 1');
      expect(await page.getByRole('button', { name: 'Open chat' }).getAttribute('aria-expanded')).toBe('false');

      const frame = await openChat(page);
      await frame.getByRole('log').getByText('We will call you at 3 pm').waitFor({ timeout: DEADLINE_MS });
      await eventually(async () => (await lastCount()) === 0, 'the unread count is 0 once the chat is open');
    } finally {
      await context.close();
    }
  });

  it('reaches a visitor who left the page after the first reply came but before the answer to their first message did', async () => {
    const context = await newVisitor();
    try {
      const page = await context.newPage();
      await page.goto(siteOrigin);
      // The answer to the first message is held back; the greeting it caused comes over the socket.
      const sends = sendsPattern();
      let release = () => {};
      const answered = new Promise<void>((resolve) => (release = resolve));
      const holdAnswer = async (route: import('playwright-core').Route) => {
        const response = await route.fetch();
        await answered;
        await route.fulfill({ response }).catch(() => {}); // the page asking is gone by then
      };
      await context.route(sends, holdAnswer);
      const frame = await openChat(page);
      await type(frame, 'Do you deliver on Sundays?');
      await frame.getByRole('log').getByText(DEFAULT_GREETING).waitFor({ timeout: DEADLINE_MS });
      const visitorId = await visitorIdOf(page);
      // The reply alone tells the site that the visitor has a conversation.
      await eventually(async () => (await siteStored(page, 'started')) === '1', 'the site knows of the conversation');

      await context.unroute(sends, holdAnswer);
      await page.reload();
      release();
      const lastCount = await watchUnreadCount(page);
      await storeReply(visitorId, 'Yes, from 10 am');
      await eventually(async () => (await lastCount()) === 1, 'the unread count is 1');
      expect(await storedBodies(visitorId)).toEqual(['Do you deliver on Sundays?', DEFAULT_GREETING, 'Yes, from 10 am']);
    } finally {
      await context.close();
    }
  });
});

describe('a message whose sending fails', () => {
  it('waits in the site\'s storage across a reload and is sent once when the widget is reachable again', async () => {
    const context = await newVisitor();
    try {
      const page = await context.newPage();
      await page.goto(siteOrigin);
      const frame = await startConversation(page, 'First, while all is well');
      const visitorId = await visitorIdOf(page);
      // The site still loads; the widget's API does not answer.
      const refuse = (route: import('playwright-core').Route) => route.abort('connectionrefused');
      await context.route(sendsPattern(), refuse);
      await type(frame, 'Typed while the chat service was unreachable');
      await eventually(
        async () => ((await siteStored(page, 'outbox')) ?? '').includes('unreachable'),
        'the message is kept in the site\'s storage',
      );
      await context.unroute(sendsPattern(), refuse);
      await page.reload();
      // Shown as sending straight away, then sent by the reloaded page (the chat stays closed).
      await eventually(async () => (await storedBodies(visitorId)).includes('Typed while the chat service was unreachable'), 'the message is stored');
      const reopened = await openChat(page);
      await reopened.getByRole('log').getByText('Typed while the chat service was unreachable').waitFor({ timeout: DEADLINE_MS });
      await eventually(
        async () => (await siteStored(page, 'outbox')) === '[]',
        'the outbox is empty',
      );
      expect((await storedBodies(visitorId)).filter((body) => body === 'Typed while the chat service was unreachable')).toHaveLength(1);
      expect((await bubbles(reopened)).filter((body) => body === 'Typed while the chat service was unreachable')).toHaveLength(1);
    } finally {
      await context.close();
    }
  });

  it('is sent by the reloaded page, the chat closed, when it was the visitor\'s first', async () => {
    const context = await newVisitor();
    try {
      const page = await context.newPage();
      await page.goto(siteOrigin);
      const sends = sendsPattern();
      const refuse = (route: import('playwright-core').Route) => route.abort('connectionrefused');
      await context.route(sends, refuse);
      const frame = await openChat(page);
      await type(frame, 'A first message, typed while the chat service was unreachable');
      await eventually(async () => ((await siteStored(page, 'outbox')) ?? '').includes('unreachable'), 'the message is kept in the site\'s storage');
      expect(await siteStored(page, 'started')).toBeNull();
      await context.unroute(sends, refuse);
      await page.reload();
      const visitorId = await visitorIdOf(page);
      await eventually(async () => (await storedBodies(visitorId)).includes('A first message, typed while the chat service was unreachable'), 'the message is stored');
      await eventually(async () => (await siteStored(page, 'outbox')) === '[]', 'the outbox is empty');
      expect(await page.getByRole('button', { name: /^Open chat/ }).getAttribute('aria-expanded')).toBe('false');
    } finally {
      await context.close();
    }
  });

  // Needs the server's messageSid de-duplication (the same customData.messageSid stores nothing
  // new, the contract's "a widget can retry safely"); without it the resend is stored twice.
  it('is stored and shown once when the answer to its first sending was lost and the page sent it again', async () => {
    const context = await newVisitor();
    try {
      const page = await context.newPage();
      await page.goto(siteOrigin);
      const frame = await startConversation(page, 'Before the lost answer');
      const visitorId = await visitorIdOf(page);
      let dropped = 0;
      // The first sending reaches the server, which stores it; its answer never reaches the page.
      await context.route(sendsPattern(), async (route) => {
        if (dropped > 0) return route.continue();
        dropped += 1;
        await route.fetch();
        await route.abort('connectionreset');
      });
      await type(frame, 'Sent twice, stored once');
      // Done sending: the outbox is empty again and nothing shows as sending.
      await eventually(
        async () =>
          (await siteStored(page, 'outbox')) === '[]' &&
          (await frame.locator('#messages li.pending').count()) === 0,
        'the page has sent the message again',
      );
      await eventually(async () => {
        const server = await conversation(visitorId);
        return server.includes('Sent twice, stored once') && JSON.stringify(await bubbles(frame)) === JSON.stringify(server);
      }, 'the page shows the conversation the server holds');
      expect(dropped).toBe(1);
      expect((await storedBodies(visitorId)).filter((body) => body === 'Sent twice, stored once')).toHaveLength(1);
      expect((await bubbles(frame)).filter((body) => body === 'Sent twice, stored once')).toHaveLength(1);
    } finally {
      await context.close();
    }
  });
});

describe("the site's identity token", () => {
  it('goes with every public call as X-Visitor-Identity and in the socket handshake, and identify() replaces it', async () => {
    const context = await newVisitor();
    try {
      const page = await context.newPage();
      const sent: { url: string; token: string | undefined }[] = [];
      page.on('request', (request) => {
        if (request.url().startsWith(`${service.origin}/v1/`) && !request.url().includes('/chat-widget-assets/') && request.frame() !== page.mainFrame()) {
          sent.push({ url: request.url(), token: request.headers()['x-visitor-identity'] });
        }
      });
      const handshakes: string[] = [];
      page.on('websocket', (socket) => socket.on('framesent', (frame) => {
        if (typeof frame.payload === 'string' && frame.payload.startsWith('40')) handshakes.push(frame.payload);
      }));
      await page.goto(`${siteOrigin}/?token=site.token.one`);
      const frame = await startConversation(page, 'Signed in as myself');
      await eventually(async () => handshakes.some((payload) => payload.includes('"identityToken":"site.token.one"')), 'the handshake carries the token');
      // The page reads the conversation back once its first message is answered (its answer
      // may have come before the socket joined): that read belongs to the first token.
      await eventually(async () => {
        const sentAt = sent.findIndex((call) => call.url.includes('incoming-chat-widget-message'));
        return sentAt >= 0 && sent.slice(sentAt + 1).some((call) => call.url.includes('chat-widget-messages'));
      }, 'the conversation is read back after the first message');
      const calls = sent.filter((call) => /chat-widget-config|incoming-chat-widget-message|chat-widget-messages|update-message-read-status/.test(call.url));
      expect(calls.some((call) => call.url.includes('incoming-chat-widget-message'))).toBe(true);
      expect(calls.filter((call) => call.token !== 'site.token.one')).toEqual([]);

      await page.evaluate(() => (window as any).chatWidget.identify('site.token.two'));
      await eventually(async () => handshakes.some((payload) => payload.includes('"identityToken":"site.token.two"')), 'the socket reconnects with the new token');
      // Cleared once the widget page has taken the new token (its socket reconnected with it): a
      // call it began before (marking the read-back messages read, say) rightly carried the first.
      sent.length = 0;
      await type(frame, 'Still me, with a fresh token');
      await eventually(async () => sent.some((call) => call.url.includes('incoming-chat-widget-message')), 'the message is sent');
      expect(sent.filter((call) => call.token !== 'site.token.two')).toEqual([]);
    } finally {
      await context.close();
    }
  });
});
