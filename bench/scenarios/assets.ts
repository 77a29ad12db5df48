// Scenario `assets`: the bytes a website pays for the chat widget. The embed script loads
// on every page view of every site that embeds it, so it has a budget; the widget page's
// files load only when a visitor opens the chat. The service sends these files as they are
// in widget/ (no build step, no compression of its own; the page's HTML only gets a few ids
// filled in), except the embed script, served without its comment lines and indentation
// (server/http/compact-script.ts); the gzip figure is what a compressing proxy in front would send.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { compactScript } from '../../server/http/compact-script.ts';
import { PAGE_MODULES } from '../../server/http/widget-pages.ts';
import type { Row, ScenarioResult } from '../measure.ts';
import { root } from '../processes.ts';

const EMBED_SCRIPT_BUDGET_BYTES = 12 * 1024;

/** Files in widget/ → what the report calls them (the path they are served on). */
const FILES: [files: string[], served: string][] = [
  [['chat-widget.js'], 'GET /v1/scripts/chat-widget.js (embed script, every page view)'],
  [['chat-widget-page.html'], 'GET /v1/chat-widget/{configId} (widget page)'],
  [['chat-widget-page.js', ...PAGE_MODULES], 'GET /v1/chat-widget-assets/page.js and the widget-*.js modules it imports'],
  [['chat-widget-page.css'], 'GET /v1/chat-widget-assets/page.css'],
];

export async function runAssetsScenario(): Promise<ScenarioResult> {
  const rows: Row[] = [];
  for (const [files, served] of FILES) {
    // Each file is its own response: their sizes, and their gzipped sizes, add up.
    const bodies = await Promise.all(
      files.map(async (file) => {
        const body = await readFile(path.join(root, 'widget', file));
        return file === 'chat-widget.js' ? Buffer.from(compactScript(body.toString('utf8'))) : body;
      }),
    );
    const bytes = bodies.reduce((sum, body) => sum + body.byteLength, 0);
    const gzipped = bodies.reduce((sum, body) => sum + gzipSync(body).byteLength, 0);
    const budget = files[0] === 'chat-widget.js' ? { target: `< ${EMBED_SCRIPT_BUDGET_BYTES / 1024} KiB`, met: bytes < EMBED_SCRIPT_BUDGET_BYTES } : {};
    rows.push({ name: `${served}: bytes served`, value: bytes / 1024, unit: 'KiB', ...budget });
    rows.push({ name: `${served}: gzip`, value: gzipped / 1024, unit: 'KiB' });
  }
  return {
    name: 'assets',
    title: 'Chat widget files a website loads',
    rows,
    notes: [
      'Sizes of the files in widget/ as the service serves them: unchanged, except the page HTML with its ids filled in and the embed script without its comment lines and indentation; gzip at the default level. No baseline: the figures are absolute.',
    ],
  };
}
