// A headless Chromium for tests that need a real browser (the chat widget in a customer's
// page), through playwright-core and the system's Chromium: no browser download.
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

/** The chat widget page in the embed script's iframe, loaded. */
export async function widgetFrame(page: Page): Promise<Frame> {
  const handle = await page.locator('iframe').elementHandle({ timeout: WIDGET_DEADLINE_MS });
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
