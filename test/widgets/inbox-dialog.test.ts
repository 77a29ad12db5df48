// The console's confirmation dialog (widget/inbox-dialog.js), as the console loads it, in a
// page of its own: a dialog's close event comes in a task after the dialog closed, so a
// question asked again before it comes must not take the earlier answer for its own.
import { readFile } from 'node:fs/promises';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { launchBrowser } from '../helpers/browser.ts';

const ORIGIN = 'https://console.test';
const PAGE = `<!doctype html><title>dialog</title>
<button id="opener">Close chat</button>
<dialog id="confirm"><p id="confirm-title"></p><p id="confirm-text"></p>
  <button type="button" id="confirm-cancel">Cancel</button><button type="button" id="confirm-ok"></button></dialog>
<script type="module">
  import { createConfirm } from './inbox-dialog.js';
  const confirm = createConfirm(document.getElementById('confirm'));
  window.answers = [];
  window.ask = (name) => confirm({ title: name, text: '', action: 'OK' }).then((confirmed) => window.answers.push(name + ' ' + confirmed));
  window.ready = true;
</script>`;

let browser: Browser;
let page: Page;

beforeAll(async () => {
  browser = await launchBrowser();
  page = await browser.newPage();
  const script = await readFile(new URL('../../widget/inbox-dialog.js', import.meta.url), 'utf8');
  await page.route(`${ORIGIN}/**`, (route) =>
    route.request().url().endsWith('/inbox-dialog.js')
      ? route.fulfill({ contentType: 'text/javascript', body: script })
      : route.fulfill({ contentType: 'text/html', body: PAGE }),
  );
  await page.goto(`${ORIGIN}/`);
  await page.waitForFunction(() => (window as unknown as { ready?: boolean }).ready === true);
});

afterAll(async () => {
  await browser?.close();
});

type DialogWindow = { answers: string[]; ask(name: string): Promise<void> };

describe('the confirmation dialog', () => {
  test('a question asked again before the cancelled one has finished closing gets its own answer', async () => {
    const answers = await page.evaluate(async () => {
      const w = window as unknown as DialogWindow;
      w.answers.length = 0;
      document.getElementById('opener')!.focus();
      void w.ask('first');
      // Cancel and ask again in one task: the first close event is still to come.
      (document.getElementById('confirm-cancel') as HTMLButtonElement).click();
      void w.ask('second');
      await new Promise((resolve) => setTimeout(resolve, 50));
      const open = (document.getElementById('confirm') as HTMLDialogElement).open;
      (document.getElementById('confirm-ok') as HTMLButtonElement).click();
      await new Promise((resolve) => setTimeout(resolve, 50));
      return { open, answers: [...w.answers] };
    });
    expect(answers).toEqual({ open: true, answers: ['first false', 'second true'] });
  });

  test('a question confirmed and another asked at once: the first stays confirmed', async () => {
    const answers = await page.evaluate(async () => {
      const w = window as unknown as DialogWindow;
      w.answers.length = 0;
      void w.ask('first');
      (document.getElementById('confirm-ok') as HTMLButtonElement).click();
      void w.ask('second');
      (document.getElementById('confirm-cancel') as HTMLButtonElement).click();
      await new Promise((resolve) => setTimeout(resolve, 50));
      return [...w.answers];
    });
    expect(answers).toEqual(['first true', 'second false']);
  });

  test('asked over an open question, that one is cancelled; Escape cancels, and the focus goes back to the opener', async () => {
    const result = await page.evaluate(async () => {
      const w = window as unknown as DialogWindow;
      w.answers.length = 0;
      document.getElementById('opener')!.focus();
      void w.ask('first');
      void w.ask('second');
      await new Promise((resolve) => setTimeout(resolve, 50));
      return [...w.answers];
    });
    expect(result).toEqual(['first false']);
    await page.keyboard.press('Escape');
    await expect.poll(() => page.evaluate(() => [...(window as unknown as DialogWindow).answers])).toEqual(['first false', 'second false']);
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('opener');
  });
});
