// A headless Chromium for tests that need a real browser (the chat widget in a customer's
// page), through playwright-core and the system's Chromium: no browser download.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { chromium, type Browser, type Frame, type Page } from 'playwright-core';

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
export async function eventually(condition: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + WIDGET_DEADLINE_MS;
  for (;;) {
    if (await condition()) return;
    if (Date.now() > deadline) throw new Error(`still not true after ${WIDGET_DEADLINE_MS} ms: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
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
