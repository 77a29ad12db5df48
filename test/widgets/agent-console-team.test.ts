// The agent console as a team's inbox (contract "A team on the conversations"), in a real
// headless Chromium at desktop size and on a phone (390x844), with the keyboard alone: the
// list names each conversation, shows its last message, its unread count and "New" until
// somebody opens it, and opening it posts the business's read mark; a reply carries the
// agent's name and the bot stays quiet after it; "Hand off" tells the visitor a person is
// here now; the bot's state and the archive are the server's, so a reload keeps them; Close
// and Archive ask first, in a dialog; the visitor panel shows what the widget page reported;
// the search filters the list.
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, launchBrowser, watchForPolicyAndScriptErrors } from '../helpers/browser.ts';
import { startTestService, type TestService } from '../helpers/service.ts';
import { createContact, record } from '../messages/conversation-fixtures.ts';
import { poll, pollUntil, visitorWrites, widgetConversation } from '../messages/reply-fixtures.ts';
import {
  CONSOLE_SCREENS,
  contactOfVisitor,
  conversationEntry,
  conversationList,
  createWidget,
  DEADLINE_MS,
  focusByKeyboard,
  isFocused,
  listedName,
  messageLog,
  newVisitorId,
  openByKeyboard,
  pressByKeyboard,
  signInByKeyboard,
  visitorSays,
} from './console-fixtures.ts';

const AWAY = 'We are away right now; we will answer soon.';

/** Reads of the API while waiting go at this pace: the console shares the account key's per-minute budget. */
const API_POLL_MS = 500;

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

async function contact(apiKey: string, contactId: string): Promise<{ is_bot_active: boolean; archived: boolean }> {
  const response = await service.request('GET', `/v1/contacts/${contactId}`, { apiKey });
  expect(response.status, response.text).toBe(200);
  return response.body.data;
}

async function unreadOf(apiKey: string, contactId: string): Promise<number> {
  const recent = await service.request('GET', '/v1/chat-sessions/recent', { apiKey });
  return recent.body.data.find((session: { contact_id: string }) => session.contact_id === contactId).unread_count;
}

describe.each(CONSOLE_SCREENS)('the console on a $name', (screen) => {
  let account: { userId: string; apiKey: string };
  let context: BrowserContext;
  let page: Page;
  let errors: string[];
  // Where the keyboard finds the conversation's header buttons from where opening left the
  // focus: the reply box on a desktop (they come before it), the heading on a phone (after it).
  const toHeader = { backwards: !screen.phone };

  beforeAll(async () => {
    account = await service.createAccount();
    context = await browser.newContext({ ignoreHTTPSErrors: true, ...screen.options });
    page = await context.newPage();
    errors = watchForPolicyAndScriptErrors(page);
  });

  afterAll(async () => {
    await context?.close();
  });

  it('lists each conversation by name with its last message and unread count, "New" until somebody opens it; opening posts the read mark, and a reload shows the same', async () => {
    const widgetId = await createWidget(service, account.apiKey);
    // Ada's conversation was read once; two messages came after.
    const ada = await createContact(service, account.apiKey, { firstName: 'Ada', lastName: 'Lovelace' });
    await record(service, account.userId, ada.contactId, 'inbound', 'Is my order shipped?');
    expect((await service.request('POST', `/v1/contacts/${ada.contactId}/read`, { apiKey: account.apiKey })).status).toBe(200);
    await record(service, account.userId, ada.contactId, 'inbound', 'Hello?');
    await record(service, account.userId, ada.contactId, 'inbound', 'Order 1234, placed on Monday');
    // A visitor's first message, which nobody has opened.
    const visitorId = newVisitorId();
    await visitorSays(service, account, widgetId, visitorId, 'Do you ship to Norway?');
    await pollUntil(service, widgetId, visitorId, (body) => !body.isBotTyping && body.messages.length === 2);
    const visitorContact = await contactOfVisitor(service, visitorId);
    const visitorName = await listedName(service, account.apiKey, visitorContact);
    expect(visitorName).toMatch(/^Visitor [0-9a-f]{6}$/);
    const greeting = (await poll(service, widgetId, visitorId)).messages[1]!.body;

    await signInByKeyboard(page, service, account.apiKey);
    const adaEntry = conversationEntry(page, 'Ada Lovelace');
    const visitorEntry = conversationEntry(page, visitorName);
    await adaEntry.waitFor({ timeout: DEADLINE_MS });
    await visitorEntry.waitFor({ timeout: DEADLINE_MS });
    expect(await adaEntry.locator('.preview').textContent()).toBe('Order 1234, placed on Monday');
    expect(await adaEntry.locator('.badge').textContent()).toBe('2 unread');
    expect(await adaEntry.getByText('New', { exact: true }).isVisible()).toBe(false);
    expect(await visitorEntry.locator('.preview').textContent()).toBe(greeting);
    expect(await visitorEntry.locator('.badge').textContent()).toBe('1 unread');
    expect(await visitorEntry.getByText('New', { exact: true }).isVisible()).toBe(true);
    expect(await page.title()).toBe('(3) Inbox');

    await openByKeyboard(page, visitorName);
    await messageLog(page).getByText('Do you ship to Norway?').waitFor({ timeout: DEADLINE_MS });
    await eventually(async () => (await unreadOf(account.apiKey, visitorContact)) === 0, 'the read mark posted', API_POLL_MS);
    expect(await page.title()).toBe('(2) Inbox');
    expect(await visitorEntry.locator('.badge').isVisible()).toBe(false);
    expect(await visitorEntry.getByText('New', { exact: true }).isVisible()).toBe(false);

    // The server keeps it: after a reload Ada's is still unread, the visitor's read.
    await page.reload();
    await adaEntry.waitFor({ timeout: DEADLINE_MS });
    await visitorEntry.waitFor({ timeout: DEADLINE_MS });
    await eventually(async () => (await page.title()) === '(2) Inbox', 'the title counts what is unread');
    expect(await adaEntry.locator('.badge').textContent()).toBe('2 unread');
    expect(await visitorEntry.locator('.badge').isVisible()).toBe(false);
    expect(await visitorEntry.getByText('New', { exact: true }).isVisible()).toBe(false);
    expect(await unreadOf(account.apiKey, ada.contactId)).toBe(2);
    expect(errors).toEqual([]);
  });

  it("a reply carries the agent's name, stored for the next visit; the visitor sees it, and their next message gets no bot answer", async () => {
    // A widget whose bot would answer the visitor's next message (the away message) if it were on.
    const conversation = await widgetConversation(service, account, { awayMessage: AWAY });
    const name = await listedName(service, account.apiKey, conversation.contactId);
    await openByKeyboard(page, name);
    await messageLog(page).getByText('hello').waitFor({ timeout: DEADLINE_MS });

    const nameField = page.getByRole('textbox', { name: 'Your name' });
    await focusByKeyboard(page, nameField, { backwards: !screen.phone });
    await page.keyboard.type('Ana');
    await page.keyboard.press('Tab');
    expect(await isFocused(page.getByRole('textbox', { name: 'Reply' }))).toBe(true);
    await page.keyboard.type('Ana here. Yes, we ship to Norway.');
    await page.keyboard.press('Enter');

    const sent = messageLog(page).getByRole('listitem').filter({ hasText: 'Ana here. Yes, we ship to Norway.' });
    await sent.waitFor({ timeout: DEADLINE_MS });
    expect(await sent.locator('.author').textContent()).toBe('Ana');
    await page.getByText('Bot off: a person answers').waitFor({ timeout: DEADLINE_MS });
    const seen = await pollUntil(service, conversation.widgetId, conversation.visitorId, (body) => body.messages.length === 3);
    expect(seen.messages[2]).toMatchObject({ body: 'Ana here. Yes, we ship to Norway.', sender_name: 'Ana' });
    expect(await page.evaluate(() => localStorage.getItem('inbox:agent-name'))).toBe('Ana');

    // The greeting is old news, so the away message would be due: only the stopped bot keeps quiet.
    await service.services.pool.query(`update messages set created_at = created_at - interval '1 hour' where contact_id = $1`, [conversation.contactId]);
    // The bot answers inside the visitor message's own transaction (or shows itself typing
    // while its turn waits): the poll right after the message is answered shows all there is.
    await visitorWrites(service, account.userId, conversation.widgetId, conversation.visitorId, 'Is the blue one in stock?');
    const after = await poll(service, conversation.widgetId, conversation.visitorId);
    expect(after.isBotTyping).toBe(false);
    expect(after.messages.map((message) => message.body).slice(2)).toEqual(['Ana here. Yes, we ship to Norway.', 'Is the blue one in stock?']);
    await messageLog(page).getByText('Is the blue one in stock?').waitFor({ timeout: DEADLINE_MS });
    expect((await contact(account.apiKey, conversation.contactId)).is_bot_active).toBe(false);

    // After a reload, the reply still says who wrote it.
    await page.reload();
    await openByKeyboard(page, name);
    await sent.locator('.author').getByText('Ana', { exact: true }).waitFor({ timeout: DEADLINE_MS });
    expect(await page.getByRole('textbox', { name: 'Your name' }).inputValue()).toBe('Ana');
    expect(errors).toEqual([]);
  });

  it('"Hand off" tells the visitor a person is here now; the bot stays off across a reload until turned on again', async () => {
    const conversation = await widgetConversation(service, account);
    const name = await listedName(service, account.apiKey, conversation.contactId);
    await openByKeyboard(page, name);
    await page.getByText('Bot answering').waitFor({ timeout: DEADLINE_MS });
    await pressByKeyboard(page, page.getByRole('button', { name: 'Hand off' }), toHeader);

    // In the name given in the test before (kept in localStorage).
    const told = await pollUntil(service, conversation.widgetId, conversation.visitorId, (body) => body.messages.length === 3);
    expect(told.messages[2]!.body).toBe('You’re now chatting with Ana.');
    expect(told.messages[2]!.body).not.toMatch(/will answer|shortly/);
    await page.getByText('Bot off: a person answers').waitFor({ timeout: DEADLINE_MS });
    await messageLog(page).getByText('You’re now chatting with Ana.').waitFor({ timeout: DEADLINE_MS });
    expect((await contact(account.apiKey, conversation.contactId)).is_bot_active).toBe(false);

    await page.reload();
    await conversationEntry(page, name).getByText('Bot off').waitFor({ timeout: DEADLINE_MS });
    await openByKeyboard(page, name);
    await page.getByText('Bot off: a person answers').waitFor({ timeout: DEADLINE_MS });
    await pressByKeyboard(page, page.getByRole('button', { name: 'Turn bot on' }), toHeader);
    await page.getByText('Bot answering').waitFor({ timeout: DEADLINE_MS });
    expect((await contact(account.apiKey, conversation.contactId)).is_bot_active).toBe(true);

    await page.reload();
    await openByKeyboard(page, name);
    await page.getByText('Bot answering').waitFor({ timeout: DEADLINE_MS });
    expect(await page.getByRole('button', { name: 'Hand off' }).isVisible()).toBe(true);
    expect(errors).toEqual([]);
  });

  it('Archive asks first in a dialog (Escape keeps the conversation); archived, it is gone after a reload and listed under Archived, where Unarchive brings it back', async () => {
    const conversation = await widgetConversation(service, account);
    const name = await listedName(service, account.apiKey, conversation.contactId);
    await openByKeyboard(page, name);
    const archive = page.getByRole('button', { name: 'Archive', exact: true });
    const dialog = page.getByRole('dialog', { name: 'Archive this conversation?' });

    await pressByKeyboard(page, archive, toHeader);
    await dialog.waitFor({ timeout: DEADLINE_MS });
    expect(await isFocused(dialog.getByRole('button', { name: 'Cancel' }))).toBe(true);
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'hidden', timeout: DEADLINE_MS });
    expect(await isFocused(archive)).toBe(true);
    expect((await contact(account.apiKey, conversation.contactId)).archived).toBe(false);

    await page.keyboard.press('Enter');
    await dialog.waitFor({ timeout: DEADLINE_MS });
    await page.keyboard.press('Tab');
    expect(await isFocused(dialog.getByRole('button', { name: 'Archive' }))).toBe(true);
    await page.keyboard.press('Enter');
    await conversationEntry(page, name).waitFor({ state: 'detached', timeout: DEADLINE_MS });
    await eventually(async () => (await contact(account.apiKey, conversation.contactId)).archived, 'the contact archived', API_POLL_MS);
    // The focus goes back to the list, not to nothing: once the archive call has answered (a live
    // update from the server can take the entry out of the list before that).
    const focusedNav = () => page.evaluate(() => document.activeElement?.closest('nav')?.getAttribute('aria-label'));
    await eventually(async () => (await focusedNav()) === 'Conversations', 'the focus back on the conversation list', API_POLL_MS);

    await page.reload();
    await page.getByRole('searchbox', { name: 'Search conversations' }).waitFor({ timeout: DEADLINE_MS });
    await conversationEntry(page, 'Ada Lovelace').waitFor({ timeout: DEADLINE_MS });
    expect(await conversationEntry(page, name).count()).toBe(0);
    await pressByKeyboard(page, page.getByRole('button', { name: 'Archived', exact: true }));
    await openByKeyboard(page, name);
    await page.getByText('Archived ·').waitFor({ timeout: DEADLINE_MS });
    await pressByKeyboard(page, page.getByRole('button', { name: 'Unarchive' }), toHeader);
    await conversationEntry(page, name).waitFor({ state: 'detached', timeout: DEADLINE_MS });
    await eventually(async () => !(await contact(account.apiKey, conversation.contactId)).archived, 'the contact unarchived', API_POLL_MS);
    await page.getByRole('button', { name: 'Archive', exact: true }).waitFor({ timeout: DEADLINE_MS });
    // Back to the list (a phone shows one pane at a time), then to the open ones.
    if (screen.phone) await pressByKeyboard(page, page.getByRole('button', { name: 'Back to conversations' }), { backwards: true });
    await pressByKeyboard(page, page.getByRole('button', { name: 'Open', exact: true }), { backwards: !screen.phone });
    await conversationEntry(page, name).waitFor({ timeout: DEADLINE_MS });
    expect(errors).toEqual([]);
  });

  it('Close asks first in a dialog, and closes the chat only when confirmed', async () => {
    const conversation = await widgetConversation(service, account);
    const name = await listedName(service, account.apiKey, conversation.contactId);
    await openByKeyboard(page, name);
    const dialog = page.getByRole('dialog', { name: 'Close this chat?' });
    await pressByKeyboard(page, page.getByRole('button', { name: 'Close chat' }), toHeader);
    await dialog.waitFor({ timeout: DEADLINE_MS });
    // Cancel is where the focus starts: Enter on it changes nothing.
    await page.keyboard.press('Enter');
    await dialog.waitFor({ state: 'hidden', timeout: DEADLINE_MS });
    const sessions = async () => (await service.request('GET', `/v1/contacts/${conversation.contactId}/chat-sessions`, { apiKey: account.apiKey })).body.data;
    expect((await sessions())[0].status).toBe('ChatSessionOpened');

    await page.keyboard.press('Enter');
    await dialog.waitFor({ timeout: DEADLINE_MS });
    await page.keyboard.press('Tab');
    await page.keyboard.press('Enter');
    await conversationEntry(page, name).waitFor({ state: 'detached', timeout: DEADLINE_MS });
    await eventually(async () => (await sessions())[0].status === 'ChatSessionClosed', 'the session closed', API_POLL_MS);
    expect(errors).toEqual([]);
  });

  it('the visitor panel shows the page, where they came from, the language, the browser, and first and last seen', async () => {
    const widgetId = await createWidget(service, account.apiKey);
    const visitorId = newVisitorId();
    const userAgent = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';
    await visitorSays(service, account, widgetId, visitorId, 'Looking at boots', {
      details: { pageUrl: 'https://shop.example/boots', referrer: 'https://search.example/?q=boots', language: 'nb-NO' },
      userAgent,
    });
    await visitorSays(service, account, widgetId, visitorId, 'Now the checkout', { details: { pageUrl: 'https://shop.example/checkout' }, userAgent });
    const contactId = await contactOfVisitor(service, visitorId);
    const { widget } = (await service.request('GET', `/v1/contacts/${contactId}`, { apiKey: account.apiKey })).body.data;
    const name = await listedName(service, account.apiKey, contactId);

    await openByKeyboard(page, name);
    const panel = page.getByRole('complementary', { name: 'About this conversation' });
    const summary = panel.getByText('Visitor', { exact: true });
    // Folded on a phone: the keyboard opens it.
    if (screen.phone) await pressByKeyboard(page, summary);
    const facts = panel.locator('#visitor-facts');
    await facts.getByText('Chrome 131 on Windows').waitFor({ timeout: DEADLINE_MS });
    const shown = await facts.evaluate((list) => {
      const pairs: Record<string, string> = {};
      for (const term of list.querySelectorAll('dt')) {
        const value = term.nextElementSibling!;
        pairs[term.textContent!] = value.querySelector('time')?.getAttribute('datetime') ?? value.textContent!;
      }
      return pairs;
    });
    expect(shown).toMatchObject({
      Page: 'https://shop.example/checkout',
      'Came from': 'https://search.example/?q=boots',
      Language: 'nb-NO',
      Browser: 'Chrome 131 on Windows',
      'First seen': widget.first_seen_at,
      'Last seen': widget.last_seen_at,
    });
    expect(await facts.getByRole('link', { name: 'https://shop.example/checkout' }).getAttribute('rel')).toBe('noopener noreferrer');
    expect(errors).toEqual([]);
  });

  it('the search filters the list by name and by last message, from the keyboard', async () => {
    const back = page.getByRole('button', { name: 'Back to conversations' });
    if (await back.isVisible()) await pressByKeyboard(page, back, { backwards: true });
    await focusByKeyboard(page, page.getByRole('searchbox', { name: 'Search conversations' }));
    const shownNames = () =>
      conversationList(page).locator('.name').evaluateAll((names) => names.filter((name) => name.checkVisibility()).map((name) => name.textContent));
    const search = async (text: string) => {
      await page.keyboard.press('ControlOrMeta+A');
      await page.keyboard.press('Backspace');
      await page.keyboard.type(text);
    };

    await search('lovelace');
    await eventually(async () => (await shownNames()).join() === 'Ada Lovelace', 'only Ada by name');
    await search('order 1234');
    await eventually(async () => (await shownNames()).join() === 'Ada Lovelace', 'only Ada by her last message');
    await search('no such thing');
    await page.getByText('No conversation matches “no such thing”.').waitFor({ timeout: DEADLINE_MS });
    expect(await shownNames()).toEqual([]);
    await search('');
    await eventually(async () => (await shownNames()).length > 1, 'every conversation again');
    expect(await shownNames()).toContain('Ada Lovelace');
    expect(errors).toEqual([]);
  });
});
