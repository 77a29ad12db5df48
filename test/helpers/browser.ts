// A headless Chromium for tests that need a real browser (the chat widget in a customer's
// page), through playwright-core and the system's Chromium: no browser download.
import { chromium, type Browser } from 'playwright-core';

export async function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    headless: true,
    // CI runs as root, where Chromium refuses its sandbox.
    args: ['--no-sandbox'],
  });
}
