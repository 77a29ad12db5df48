// `npm run demo` as a newcomer runs it beside `npm start`: a demo account and widget, the
// console's address, and a demo site page the service serves itself, where the widget opens
// and a visitor's message reaches the account's conversations.
import { spawnSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { Agent, fetch } from 'undici';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { eventually, launchBrowser, watchForPolicyAndScriptErrors, widgetFrame, WIDGET_DEADLINE_MS } from '../helpers/browser.ts';
import { root, serviceEnv, startServiceProcess, type ServiceProcess } from './service-process.ts';

const agent = new Agent({ connect: { rejectUnauthorized: false } });
let dataDir: string;
let service: ServiceProcess;
let browser: Browser;

beforeAll(async () => {
  dataDir = await mkdtemp(path.join(tmpdir(), 'mapi-demo-'));
  service = await startServiceProcess({ DATA_DIR: dataDir });
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
  if (service) {
    service.child.kill('SIGTERM');
    await service.exited;
  }
  await rm(dataDir, { recursive: true, force: true });
});

test('prints the console and a demo site where the widget opens and a visitor message reaches the account', async () => {
  const result = spawnSync(process.execPath, ['server/admin/cli.ts', 'demo:create'], {
    cwd: root,
    env: serviceEnv({ DATA_DIR: dataDir, PORT: String(service.port) }),
    encoding: 'utf8',
  });
  expect(result.status, result.stderr).toBe(0);
  const demo = JSON.parse(result.stdout.trim());
  expect(demo).toEqual({
    userId: expect.stringMatching(/^usr_/),
    apiKey: expect.stringMatching(/^mk_/),
    widgetId: expect.stringMatching(/^cw_/),
    console: `${service.baseUrl}/inbox`,
    demoSite: `${service.baseUrl}/demo-site/${demo.widgetId}`,
  });
  expect((await fetch(demo.console, { dispatcher: agent })).status).toBe(200);

  const context = await browser.newContext({ ignoreHTTPSErrors: true, viewport: { width: 1280, height: 800 } });
  try {
    const page = await context.newPage();
    const errors = watchForPolicyAndScriptErrors(page);
    const answer = await page.goto(demo.demoSite);
    expect(answer?.status()).toBe(200);
    await page.getByRole('link', { name: 'agent console' }).waitFor({ timeout: WIDGET_DEADLINE_MS });
    await page.getByRole('button', { name: 'Open chat' }).click();
    const frame = await widgetFrame(page);
    const box = frame.getByRole('textbox', { name: 'Your message' });
    await box.fill('Hello from the demo site');
    await box.press('Enter');
    await eventually(async () => {
      const recent = await fetch(`${service.baseUrl}/chat-sessions/recent?includeMessages=true`, { dispatcher: agent, headers: { 'x-api-key': demo.apiKey } });
      const body = (await recent.json()) as { data: { messages?: { body?: string }[] }[] };
      return body.data.some((session) => session.messages?.some((message) => JSON.stringify(message).includes('Hello from the demo site')));
    }, 'the visitor message in the account');
    expect(errors).toEqual([]);
  } finally {
    await context.close();
  }
});

test('answers 404 for an unknown widget', async () => {
  const answer = await fetch(`${service.baseUrl}/demo-site/cw_unknown`, { dispatcher: agent });
  expect(answer.status).toBe(404);
});
