// What the agent console's browser tests share: the two screens the console is tried on, signing
// in and moving around with the keyboard alone, a visitor writing through the public endpoint
// (with the page details a widget page reports), and axe-core run inside the console's page.
import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import type { BrowserContextOptions, Locator, Page } from 'playwright-core';
import { expect } from 'vitest';
import { eventually } from '../helpers/browser.ts';
import type { TestService } from '../helpers/service.ts';

/** Deadline for conditions that depend on the worker, the database's notifications and the network; never a measured time. */
export const DEADLINE_MS = 45_000;

/** A desktop browser and a phone (390x844, touch). */
export const CONSOLE_SCREENS: { name: string; phone: boolean; options: BrowserContextOptions }[] = [
  { name: 'desktop', phone: false, options: { viewport: { width: 1280, height: 800 } } },
  { name: 'phone', phone: true, options: { viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true } },
];

export function consoleUrl(service: TestService): string {
  return `${service.origin}/v1/inbox`;
}

/** Whether the element has the keyboard focus. */
export function isFocused(target: Locator): Promise<boolean> {
  return target.evaluate((element) => element.ownerDocument.activeElement === element);
}

/** Moves the focus with Tab (or Shift+Tab) until it reaches the target, as a keyboard user would; fails if it never does. */
export async function focusByKeyboard(page: Page, target: Locator, options: { backwards?: boolean } = {}): Promise<void> {
  await target.waitFor({ timeout: DEADLINE_MS });
  for (let presses = 0; presses < 40; presses += 1) {
    if (await isFocused(target)) return;
    await page.keyboard.press(options.backwards ? 'Shift+Tab' : 'Tab');
  }
  throw new Error('the keyboard never reached the element');
}

/** Tabs to the target and presses Enter. */
export async function pressByKeyboard(page: Page, target: Locator, options: { backwards?: boolean } = {}): Promise<void> {
  await focusByKeyboard(page, target, options);
  await page.keyboard.press('Enter');
}

/** Opens the console and signs in with the keyboard alone (the key field has the focus); waits until the feed is live. */
export async function signInByKeyboard(page: Page, service: TestService, apiKey: string): Promise<void> {
  await page.goto(consoleUrl(service));
  const field = page.getByLabel('API key or ID token');
  await eventually(() => isFocused(field), 'the key field has the focus');
  await page.keyboard.type(apiKey);
  await page.keyboard.press('Enter');
  await connectionState(page).getByText('Live').waitFor({ timeout: DEADLINE_MS });
}

export function connectionState(page: Page): Locator {
  return page.getByRole('banner').getByRole('status');
}

export function conversationList(page: Page): Locator {
  return page.getByRole('navigation', { name: 'Conversations' }).getByRole('list');
}

/** The list's entry for a contact name. */
export function conversationEntry(page: Page, name: string): Locator {
  return conversationList(page).getByRole('button').filter({ has: page.locator('.name', { hasText: name }) });
}

/** Opens a conversation from the list with the keyboard: back to the list on a phone, down from the search, Enter. */
export async function openByKeyboard(page: Page, name: string): Promise<void> {
  const back = page.getByRole('button', { name: 'Back to conversations' });
  if (await back.isVisible()) await pressByKeyboard(page, back, { backwards: true });
  const entry = conversationEntry(page, name);
  await entry.waitFor({ timeout: DEADLINE_MS });
  await focusByKeyboard(page, page.getByRole('searchbox', { name: 'Search conversations' }));
  await page.keyboard.press('ArrowDown');
  for (let presses = 0; presses < 30 && !(await isFocused(entry)); presses += 1) await page.keyboard.press('ArrowDown');
  expect(await isFocused(entry)).toBe(true);
  await page.keyboard.press('Enter');
  await page.getByRole('heading', { level: 2, name }).waitFor({ timeout: DEADLINE_MS });
}

export function messageLog(page: Page): Locator {
  return page.getByRole('log', { name: 'Messages' });
}

export function newVisitorId(): string {
  return `v_${randomUUID().replaceAll('-', '')}`;
}

export type PageDetails = { pageUrl?: string; referrer?: string; language?: string };

/** A visitor message through the public endpoint, as the widget page sends it (with what the page reports). */
export async function visitorSays(
  service: TestService,
  account: { userId: string },
  widgetId: string,
  visitorId: string,
  body: string,
  extra: { details?: PageDetails; userAgent?: string; mediaUrl?: string; mediaContentType?: string } = {},
): Promise<void> {
  const media = extra.mediaUrl ? { mediaUrl: extra.mediaUrl, mediaContentType: extra.mediaContentType } : {};
  const sent = await service.request('POST', '/v1/incoming-chat-widget-message', {
    query: { userId: account.userId },
    body: { messageType: 'text', customData: { body, fromId: visitorId, toId: widgetId, ...extra.details, ...media } },
    headers: extra.userAgent ? { 'user-agent': extra.userAgent } : {},
  });
  expect(sent.status, sent.text).toBe(200);
}

export async function contactOfVisitor(service: TestService, visitorId: string): Promise<string> {
  const { rows } = await service.services.pool.query<{ id: string }>('select id from contacts where widget_visitor_id = $1', [visitorId]);
  expect(rows).toHaveLength(1);
  return rows[0]!.id;
}

export async function createWidget(service: TestService, apiKey: string, settings: Record<string, unknown> = {}): Promise<string> {
  const created = await service.request('POST', '/v1/chat-widgets', { apiKey, body: { name: 'Shop chat', settings } });
  expect(created.status, created.text).toBe(201);
  return created.body.data.id;
}

/** The console's name for a contact, as GET /chat-sessions/recent gives it. */
export async function listedName(service: TestService, apiKey: string, contactId: string): Promise<string> {
  const recent = await service.request('GET', '/v1/chat-sessions/recent', { apiKey });
  const item = recent.body.data.find((session: { contact_id: string }) => session.contact_id === contactId);
  expect(item, `contact ${contactId} listed`).toBeDefined();
  return item.contact_name;
}

const axeSource = readFile(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

export type AxeViolation = { id: string; impact: string | null; help: string; nodes: string[] };

/**
 * The serious and critical violations axe-core finds in the page as it is now. The script is
 * evaluated through the debugging protocol, which the console's Content-Security-Policy does
 * not govern.
 */
export async function seriousViolations(page: Page): Promise<AxeViolation[]> {
  if (!(await page.evaluate(() => 'axe' in window))) await page.evaluate(await axeSource);
  return page.evaluate(async () => {
    const axe = (window as unknown as { axe: any }).axe;
    const result = await axe.run(document, { resultTypes: ['violations'] });
    return result.violations
      .filter((violation: any) => violation.impact === 'serious' || violation.impact === 'critical')
      .map((violation: any) => ({ id: violation.id, impact: violation.impact, help: violation.help, nodes: violation.nodes.map((node: any) => node.html) }));
  });
}
