// Scenario `assets`: the bytes a website pays for the chat widget. The embed script loads
// on every page view of every site that embeds it, so it has a budget; the widget page's
// files load only when a visitor opens the chat. The service sends these files as they are
// in widget/ (no build step, no compression of its own; the page's HTML only gets a few ids
// filled in), so their sizes on disk are the bytes served; the gzip figure is what a
// compressing proxy in front would send.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import type { Row, ScenarioResult } from '../measure.ts';
import { root } from '../processes.ts';

const EMBED_SCRIPT_BUDGET_BYTES = 12 * 1024;

/** File in widget/ → what the report calls it (the path it is served on). */
const FILES: [file: string, served: string][] = [
  ['chat-widget.js', 'GET /v1/scripts/chat-widget.js (embed script, every page view)'],
  ['chat-widget-page.html', 'GET /v1/chat-widget/{configId} (widget page)'],
  ['chat-widget-page.js', 'GET /v1/chat-widget-assets/page.js'],
  ['chat-widget-page.css', 'GET /v1/chat-widget-assets/page.css'],
];

export async function runAssetsScenario(): Promise<ScenarioResult> {
  const rows: Row[] = [];
  for (const [file, served] of FILES) {
    const body = await readFile(path.join(root, 'widget', file));
    const kib = body.byteLength / 1024;
    const budget = file === 'chat-widget.js' ? { target: `< ${EMBED_SCRIPT_BUDGET_BYTES / 1024} KiB`, met: body.byteLength < EMBED_SCRIPT_BUDGET_BYTES } : {};
    rows.push({ name: `${served}: bytes served`, value: kib, unit: 'KiB', ...budget });
    rows.push({ name: `${served}: gzip`, value: gzipSync(body).byteLength / 1024, unit: 'KiB' });
  }
  return {
    name: 'assets',
    title: 'Chat widget files a website loads',
    rows,
    notes: ['Sizes of the files in widget/, which the service serves unchanged (the page HTML with its ids filled in); gzip at the default level. No baseline: the figures are absolute.'],
  };
}
