// A headless Chromium for tests that need a real browser (the chat widget in a customer's
// page), through playwright-core and the system's Chromium: no browser download. Also what
// such tests check a page with: keyboard focus, text contrast, and axe-core run in the page.
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { chromium, type Browser, type BrowserContextOptions, type Frame, type Locator, type Page } from 'playwright-core';
import { contrastRatio } from '../../server/widgets/widget-colours.ts';

/** Deadline for conditions that depend on the worker and the network; never a measured time. */
export const WIDGET_DEADLINE_MS = 30_000;

export async function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    headless: true,
    // CI runs as root, where Chromium refuses its sandbox.
    args: ['--no-sandbox'],
  });
}

/** Polls until the condition holds; the deadline only bounds a failure. */
export async function eventually(condition: () => Promise<boolean>, what: string, intervalMs = 100): Promise<void> {
  const deadline = Date.now() + WIDGET_DEADLINE_MS;
  for (;;) {
    if (await condition()) return;
    if (Date.now() > deadline) throw new Error(`still not true after ${WIDGET_DEADLINE_MS} ms: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

/** A customer's site on its own loopback origin (`http://127.0.0.1:<port>`). */
export type SitePage = { origin: string; close(): Promise<void> };

/**
 * Serves a customer's site: `/` answers the HTML `page` writes for the request's query
 * (called per request, so it may name a widget created after the site started); the
 * favicon is 204, so the browser's console holds no 404 that is not the widget's; anything
 * else is 404.
 */
export async function serveSitePage(page: (query: URLSearchParams) => string): Promise<SitePage> {
  const site = createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://site');
    if (url.pathname !== '/') {
      response.writeHead(url.pathname === '/favicon.ico' ? 204 : 404).end();
      return;
    }
    response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(page(url.searchParams));
  });
  await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
  return {
    origin: `http://127.0.0.1:${(site.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => site.close(() => resolve())),
  };
}

/** Collects every Content-Security-Policy refusal and script error of a page (the site's or a console's). */
export function watchForPolicyAndScriptErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error' && /Content Security Policy|Refused/.test(message.text())) errors.push(message.text());
  });
  page.on('pageerror', (error) => errors.push(error.message));
  return errors;
}

/** The chat widget page in the embed script's iframe, loaded; `timeout` bounds a failure only. */
export async function widgetFrame(page: Page, timeout = WIDGET_DEADLINE_MS): Promise<Frame> {
  const handle = await page.locator('iframe').elementHandle({ timeout });
  const frame = await handle!.contentFrame();
  await frame!.waitForLoadState('load');
  return frame!;
}

/** Opens the chat from the site's launcher and waits until the visitor can type. */
export async function openChat(page: Page): Promise<Frame> {
  await page.getByRole('button', { name: 'Open chat' }).click({ timeout: WIDGET_DEADLINE_MS });
  const frame = await widgetFrame(page);
  await frame.getByRole('textbox', { name: 'Your message' }).waitFor({ timeout: WIDGET_DEADLINE_MS });
  return frame;
}

/** Writes a message and waits until the conversation shows it. */
export async function typeMessage(frame: Frame, text: string): Promise<void> {
  const box = frame.getByRole('textbox', { name: 'Your message' });
  await box.fill(text);
  await box.press('Enter');
  await frame.getByRole('log').getByText(text).waitFor({ timeout: WIDGET_DEADLINE_MS });
}

/** The two screens the widget is tried on: a desktop browser and a phone (390x844, touch). */
export const SCREENS: { name: string; options: BrowserContextOptions }[] = [
  { name: 'desktop', options: { viewport: { width: 1280, height: 800 } } },
  { name: 'phone', options: { viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true } },
];

/** Whether the element has the keyboard focus (in its own document, and that document in the window's). */
export function isFocused(target: Locator): Promise<boolean> {
  return target.evaluate((element) => element.ownerDocument.activeElement === element && element.ownerDocument.hasFocus());
}

/** Moves the focus with Tab (or Shift+Tab) until it reaches the target, as a keyboard user would; fails if it never does. */
export async function focusByKeyboard(page: Page, target: Locator, options: { backwards?: boolean } = {}): Promise<void> {
  await target.waitFor({ timeout: WIDGET_DEADLINE_MS });
  for (let presses = 0; presses < 25; presses += 1) {
    if (await isFocused(target)) return;
    await page.keyboard.press(options.backwards ? 'Shift+Tab' : 'Tab');
  }
  throw new Error('the keyboard never reached the element');
}

/** Opens the chat with the keyboard alone (Tab to the launcher, Enter) and waits until the visitor can type. */
export async function openChatByKeyboard(page: Page): Promise<Frame> {
  await focusByKeyboard(page, page.getByRole('button', { name: 'Open chat' }));
  await page.keyboard.press('Enter');
  const frame = await widgetFrame(page);
  const text = frame.getByRole('textbox', { name: 'Your message' });
  await eventually(() => isFocused(text), 'the message box has the focus');
  return frame;
}

/** `rgb(r, g, b)` or `rgba(r, g, b, a)` as CSS hex (alpha kept). */
function hexOf(color: string): string {
  const parts = (color.match(/[\d.]+/g) ?? []).map(Number);
  const [r = 0, g = 0, b = 0, a = 1] = parts;
  const hex = (value: number) => Math.round(value).toString(16).padStart(2, '0');
  return `#${hex(r)}${hex(g)}${hex(b)}${a < 1 ? hex(a * 255) : ''}`;
}

/** The WCAG contrast of an element's text colour on the first opaque background behind it. */
export async function textContrast(target: Locator): Promise<number> {
  const [color, background] = await target.evaluate((element) => {
    let node: Element | null = element;
    let behind = 'rgb(255, 255, 255)';
    while (node) {
      const fill = getComputedStyle(node).backgroundColor;
      if (fill && !/rgba\(.*,\s*0\)$/.test(fill) && fill !== 'transparent') {
        behind = fill;
        break;
      }
      node = node.parentElement;
    }
    return [getComputedStyle(element).color, behind];
  });
  return contrastRatio(hexOf(color), hexOf(background));
}

const axeSource = readFile(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

export type AxeViolation = { id: string; impact: string | null; help: string; nodes: string[] };

/**
 * The serious and critical violations axe-core finds in the page or frame (within `include`,
 * CSS selectors, when given). It is evaluated through the debugging protocol, which a page's
 * Content-Security-Policy does not govern.
 */
export async function seriousAccessibilityViolations(target: Page | Frame, include?: string[]): Promise<AxeViolation[]> {
  if (!(await target.evaluate(() => 'axe' in window))) await target.evaluate(await axeSource);
  return target.evaluate(async (selectors) => {
    const axe = (window as unknown as { axe: any }).axe;
    const context = selectors ? { include: selectors.map((selector) => [selector]) } : document;
    const result = await axe.run(context, { iframes: false, resultTypes: ['violations'] });
    return result.violations
      .filter((violation: any) => violation.impact === 'serious' || violation.impact === 'critical')
      .map((violation: any) => ({ id: violation.id, impact: violation.impact, help: violation.help, nodes: violation.nodes.map((node: any) => node.html) }));
  }, include ?? null);
}
