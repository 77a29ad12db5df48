// The agent console kept open all day, in a real headless Chromium at desktop size and on a
// phone (390x844), with the keyboard wherever a person would use it: after sign-in the focus
// is on the search; the tab's title counts what is unread; the connection status says
// offline, reconnecting and live as they are, and what was said meanwhile shows; media show
// as a link and an image (a visitor's image only when asked for); Alerts ask the browser for
// permission only when turned on, then a new message plays a tone and shows a notification;
// appointments are booked, listed and cancelled from the conversation; the conversation's
// header keeps the back button and the name readable; axe-core finds no serious or critical
// violation.
import type { Browser, BrowserContext, Page, WebSocketRoute } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, launchBrowser, watchForPolicyAndScriptErrors } from '../helpers/browser.ts';
import { startTestService, type TestService } from '../helpers/service.ts';
import { createContact, record } from '../messages/conversation-fixtures.ts';
import { widgetConversation } from '../messages/reply-fixtures.ts';
import {
  CONSOLE_SCREENS,
  connectionState,
  contactOfVisitor,
  conversationEntry,
  createWidget,
  DEADLINE_MS,
  focusByKeyboard,
  isFocused,
  listedName,
  messageLog,
  newVisitorId,
  openByKeyboard,
  pressByKeyboard,
  seriousViolations,
  signInByKeyboard,
  visitorSays,
} from './console-fixtures.ts';

let service: TestService;
let browser: Browser;

beforeAll(async () => {
  service = await startTestService();
  browser = await launchBrowser();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await service?.stop();
});

/** Records every text the connection status shows from now on, in order. */
async function recordConnectionStates(page: Page): Promise<() => Promise<string[]>> {
  await page.evaluate(() => {
    const status = document.getElementById('connection')!;
    const seen: string[] = [];
    (window as unknown as { connectionStates: string[] }).connectionStates = seen;
    new MutationObserver(() => seen.push(status.textContent ?? '')).observe(status, { childList: true, characterData: true, subtree: true });
  });
  return () => page.evaluate(() => (window as unknown as { connectionStates: string[] }).connectionStates);
}

describe.each(CONSOLE_SCREENS)('the console on a $name', (screen) => {
  let account: { userId: string; apiKey: string };
  let widgetId: string;
  let context: BrowserContext;
  let page: Page;
  let errors: string[];
  const toHeader = { backwards: !screen.phone };

  beforeAll(async () => {
    account = await service.createAccount();
    widgetId = await createWidget(service, account.apiKey);
    context = await browser.newContext({ ignoreHTTPSErrors: true, ...screen.options });
    page = await context.newPage();
    errors = watchForPolicyAndScriptErrors(page);
  });

  afterAll(async () => {
    await context?.close();
  });

  it("after sign-in the focus is on the search; the tab's title counts what is unread as messages arrive", async () => {
    await signInByKeyboard(page, service, account.apiKey);
    expect(await isFocused(page.getByRole('searchbox', { name: 'Search conversations' }))).toBe(true);
    expect(await page.title()).toBe('Inbox');

    const first = newVisitorId();
    const second = newVisitorId();
    await visitorSays(service, account, widgetId, first, 'Are you open today?');
    const firstName = await listedName(service, account.apiKey, await contactOfVisitor(service, first));
    await eventually(async () => (await page.title()) === '(1) Inbox', 'one unread');
    await visitorSays(service, account, widgetId, first, 'Until when?');
    await eventually(async () => (await page.title()) === '(2) Inbox', 'two unread');
    await visitorSays(service, account, widgetId, second, 'Hi');
    await eventually(async () => (await page.title()) === '(3) Inbox', 'three unread');
    expect(await conversationEntry(page, firstName).locator('.badge').textContent()).toBe('2 unread');

    await openByKeyboard(page, firstName);
    await eventually(async () => (await page.title()) === '(1) Inbox', 'the opened conversation read');
    expect(errors).toEqual([]);
  });

  it('says how the live connection is: offline while the browser is, then reconnecting, then live; a message written meanwhile shows', async () => {
    const conversation = await widgetConversation(service, account);
    const name = await listedName(service, account.apiKey, conversation.contactId);
    await openByKeyboard(page, name);
    await messageLog(page).getByText('hello').waitFor({ timeout: DEADLINE_MS });
    const states = await recordConnectionStates(page);

    await context.setOffline(true);
    try {
      await connectionState(page).getByText('Offline').waitFor({ timeout: DEADLINE_MS });
      await visitorSays(service, account, conversation.widgetId, conversation.visitorId, 'Written while you were offline');
    } finally {
      await context.setOffline(false);
    }
    await connectionState(page).getByText('Live').waitFor({ timeout: DEADLINE_MS });
    await messageLog(page).getByText('Written while you were offline').waitFor({ timeout: DEADLINE_MS });

    const seen = await states();
    const offline = seen.findIndex((text) => text.startsWith('Offline'));
    const reconnecting = seen.indexOf('Reconnecting…');
    expect(offline, seen.join(' | ')).toBeGreaterThanOrEqual(0);
    expect(reconnecting, seen.join(' | ')).toBeGreaterThan(offline);
    expect(seen.lastIndexOf('Live')).toBeGreaterThan(reconnecting);
    expect(errors).toEqual([]);
  });

  it('a socket that drops while the network is up shows reconnecting, then live again', async () => {
    const sockets: WebSocketRoute[] = [];
    // The console's WebSocket, passed through to the service, so the test can cut it.
    await page.routeWebSocket(/\/trpc/, (socket) => {
      socket.connectToServer();
      sockets.push(socket);
    });
    try {
      await page.reload();
      await connectionState(page).getByText('Live').waitFor({ timeout: DEADLINE_MS });
      expect(sockets).toHaveLength(1);
      const states = await recordConnectionStates(page);
      await sockets[0]!.close({ code: 4000, reason: 'cut by the test' });
      await eventually(async () => sockets.length === 2, 'a second socket');
      await connectionState(page).getByText('Live').waitFor({ timeout: DEADLINE_MS });
      const seen = await states();
      expect(seen.indexOf('Reconnecting…'), seen.join(' | ')).toBeGreaterThanOrEqual(0);
      expect(seen.lastIndexOf('Live')).toBeGreaterThan(seen.indexOf('Reconnecting…'));
      // The network was up all along: never called offline.
      expect(seen.filter((text) => /offline/i.test(text)), seen.join(' | ')).toEqual([]);
    } finally {
      await page.unrouteAll();
    }
    expect(errors).toEqual([]);
  });

  it("shows a message's media: a reply's image inline with its link; a visitor's image only when the agent asks, since loading it would tell the visitor", async () => {
    const conversation = await widgetConversation(service, account);
    const name = await listedName(service, account.apiKey, conversation.contactId);
    const replyImage = `${service.origin}/v1/inbox-assets/map.png`;
    const visitorImage = `${service.origin}/v1/inbox-assets/photo.jpg`;
    await openByKeyboard(page, name);
    await messageLog(page).getByText('hello').waitFor({ timeout: DEADLINE_MS });

    const replied = await service.request('POST', `/v1/contacts/${conversation.contactId}/messages`, {
      apiKey: account.apiKey,
      body: { text: 'Here is the map.', media_url: replyImage, media_content_type: 'image/png', sender_name: 'Ana' },
    });
    expect(replied.status, replied.text).toBe(201);
    await visitorSays(service, account, conversation.widgetId, conversation.visitorId, 'This one?', { mediaUrl: visitorImage, mediaContentType: 'image/jpeg' });

    const check = async () => {
      const log = messageLog(page);
      const reply = log.getByRole('listitem').filter({ hasText: 'Here is the map.' });
      await reply.getByRole('img', { name: 'Image from Ana' }).waitFor({ timeout: DEADLINE_MS });
      expect(await reply.getByRole('img').getAttribute('src')).toBe(replyImage);
      expect(await reply.getByRole('link', { name: 'Attachment: map.png (image/png)' }).getAttribute('href')).toBe(replyImage);
      const asked = log.getByRole('listitem').filter({ hasText: 'This one?' });
      await asked.getByRole('link', { name: 'Attachment: photo.jpg (image/jpeg)' }).waitFor({ timeout: DEADLINE_MS });
      expect(await asked.getByRole('img').count()).toBe(0);
      await pressByKeyboard(page, asked.getByRole('button', { name: 'Show image' }), { backwards: !screen.phone });
      expect(await asked.getByRole('img').getAttribute('src')).toBe(visitorImage);
    };
    // Live, and again read back after a reload.
    await check();
    await page.reload();
    await openByKeyboard(page, name);
    await check();
    expect(errors).toEqual([]);
  });

  it('Alerts ask the browser for permission only when turned on; then a new message plays a tone and shows a notification', async () => {
    await page.addInitScript(() => {
      const calls = { permissionRequests: 0, notifications: [] as string[], tones: 0 };
      (window as unknown as { alertCalls: typeof calls }).alertCalls = calls;
      const Real = window.Notification;
      const Recorded = function (title: string, options?: NotificationOptions) {
        calls.notifications.push(`${title}: ${options?.body ?? ''}`);
        return new Real(title, options);
      } as unknown as typeof Notification;
      Object.defineProperty(Recorded, 'permission', { get: () => Real.permission });
      Recorded.requestPermission = (...args: Parameters<typeof Real.requestPermission>) => {
        calls.permissionRequests += 1;
        return Real.requestPermission(...args);
      };
      window.Notification = Recorded;
      const createOscillator = AudioContext.prototype.createOscillator;
      AudioContext.prototype.createOscillator = function (this: AudioContext) {
        calls.tones += 1;
        return createOscillator.call(this);
      };
    });
    const calls = () => page.evaluate(() => (window as unknown as { alertCalls: { permissionRequests: number; notifications: string[]; tones: number } }).alertCalls);
    await page.reload();
    await connectionState(page).getByText('Live').waitFor({ timeout: DEADLINE_MS });
    expect(await calls()).toEqual({ permissionRequests: 0, notifications: [], tones: 0 });

    const toggle = page.getByRole('switch', { name: 'Alerts' });
    await focusByKeyboard(page, toggle, { backwards: true });
    await page.keyboard.press('Space');
    expect(await toggle.isChecked()).toBe(true);
    await eventually(async () => (await calls()).permissionRequests === 1, 'permission asked once, on the toggle');
    await context.grantPermissions(['notifications'], { origin: service.origin });

    const visitorId = newVisitorId();
    await visitorSays(service, account, widgetId, visitorId, 'Anyone there?');
    await eventually(async () => (await calls()).notifications.length > 0, 'a notification');
    const after = await calls();
    expect(after.notifications).toEqual(['New conversation: Anyone there?']);
    expect(after.tones).toBe(1);
    expect(after.permissionRequests).toBe(1);
    expect(await page.evaluate(() => localStorage.getItem('inbox:alerts'))).toBe('on');
    expect(errors).toEqual([]);
  });

  it('books an appointment from the conversation, lists it, and cancels it after confirming', async () => {
    const conversation = await widgetConversation(service, account);
    const name = await listedName(service, account.apiKey, conversation.contactId);
    await openByKeyboard(page, name);
    const panel = page.getByRole('complementary', { name: 'About this conversation' });
    // Folded on a phone: the keyboard opens it.
    if (screen.phone) await pressByKeyboard(page, panel.getByText('Appointments', { exact: true }));
    await panel.getByText('None booked.').waitFor({ timeout: DEADLINE_MS });

    const title = panel.getByRole('textbox', { name: 'Title' });
    await focusByKeyboard(page, title, toHeader);
    await page.keyboard.type('Boot fitting');
    // The date-and-time field's own keys depend on the locale: filled directly.
    await panel.getByLabel('Date and time').fill('2031-03-14T10:30');
    await title.press('Enter');
    const booked = panel.getByRole('listitem').filter({ hasText: 'Boot fitting' });
    await booked.waitFor({ timeout: DEADLINE_MS });
    const startsAt = await page.evaluate(() => new Date('2031-03-14T10:30').toISOString());
    expect(await booked.locator('time').getAttribute('datetime')).toBe(startsAt);
    const listed = async () =>
      (await service.request('GET', `/v1/contacts/${conversation.contactId}/appointments`, { apiKey: account.apiKey })).body.appointments;
    expect((await listed()).map((appointment: Record<string, string>) => [appointment.title, appointment.starts_at, appointment.status])).toEqual([
      ['Boot fitting', startsAt, 'booked'],
    ]);

    await pressByKeyboard(page, booked.getByRole('button', { name: 'Cancel appointment: Boot fitting' }));
    const dialog = page.getByRole('dialog', { name: 'Cancel this appointment?' });
    await dialog.waitFor({ timeout: DEADLINE_MS });
    await page.keyboard.press('Tab');
    expect(await isFocused(dialog.getByRole('button', { name: 'Cancel appointment' }))).toBe(true);
    await page.keyboard.press('Enter');
    await booked.getByText('Cancelled').waitFor({ timeout: DEADLINE_MS });
    expect((await listed())[0].status).toBe('cancelled');
    expect(errors).toEqual([]);
  });

  it("the conversation's header keeps the back button and the whole name readable, and nothing scrolls sideways", async () => {
    const { contactId } = await createContact(service, account.apiKey, { firstName: 'Maria Fernanda', lastName: 'Oliveira' });
    await record(service, account.userId, contactId, 'inbound', 'Olá!');
    await page.reload();
    await openByKeyboard(page, 'Maria Fernanda Oliveira');
    const heading = page.getByRole('heading', { level: 2, name: 'Maria Fernanda Oliveira' });
    const box = (locator: ReturnType<Page['locator']>) => locator.evaluate((element) => {
      const rect = element.getBoundingClientRect();
      return { left: rect.left, right: rect.right, top: rect.top, bottom: rect.bottom, clipped: element.scrollWidth > element.clientWidth };
    });
    const name = await box(heading);
    expect(name.clipped).toBe(false);
    expect(name.right).toBeLessThanOrEqual(screen.options.viewport!.width);
    const back = page.getByRole('button', { name: 'Back to conversations' });
    if (screen.phone) {
      expect(await back.textContent()).toBe('‹ Back');
      const backBox = await box(back);
      expect(backBox.clipped).toBe(false);
      expect(backBox.right).toBeLessThanOrEqual(name.left);
      for (const action of ['Hand off', 'Close chat', 'Archive']) {
        const actionBox = await box(page.getByRole('button', { name: action, exact: true }));
        expect(actionBox.clipped, action).toBe(false);
        expect(actionBox.right, action).toBeLessThanOrEqual(390);
      }
    } else {
      expect(await back.isVisible()).toBe(false);
    }
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(screen.options.viewport!.width);
    expect(errors).toEqual([]);
  });

  it('axe-core finds no serious or critical violation: signed out, the list, a conversation with its panels open, and the confirmation dialog', async () => {
    // A new tab has its own sessionStorage: signed out.
    const signedOut = await context.newPage();
    try {
      await signedOut.goto(`${service.origin}/v1/inbox`);
      await signedOut.getByLabel('API key or ID token').waitFor({ timeout: DEADLINE_MS });
      expect(await seriousViolations(signedOut), 'signed out').toEqual([]);
    } finally {
      await signedOut.close();
    }
    await page.reload();
    await conversationEntry(page, 'Maria Fernanda Oliveira').waitFor({ timeout: DEADLINE_MS });
    expect(await seriousViolations(page), 'the list').toEqual([]);
    await openByKeyboard(page, 'Maria Fernanda Oliveira');
    await page.locator('#visitor-panel').evaluate((panel) => ((panel as HTMLDetailsElement).open = true));
    await page.locator('#appointments-panel').evaluate((panel) => ((panel as HTMLDetailsElement).open = true));
    await page.getByText('None booked.').waitFor({ timeout: DEADLINE_MS });
    expect(await seriousViolations(page), 'a conversation').toEqual([]);
    await pressByKeyboard(page, page.getByRole('button', { name: 'Archive', exact: true }), toHeader);
    await page.getByRole('dialog').waitFor({ timeout: DEADLINE_MS });
    expect(await seriousViolations(page), 'the dialog').toEqual([]);
    await page.keyboard.press('Escape');
    expect(errors).toEqual([]);
  });
});
