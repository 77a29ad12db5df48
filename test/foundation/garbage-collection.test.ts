// The service's V8 settings: allocation-site pretenuring is off in the service's process, so a
// site whose objects once survived a young collection does not send every later object it
// makes to the old generation.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { expect, test } from 'vitest';

const root = path.resolve(import.meta.dirname, '../..');
const settings = pathToFileURL(path.join(root, 'server/garbage-collection.ts')).href;

/**
 * Megabytes the old generation grows by while one allocation site makes 20 million objects
 * that die young, after two million from the same site all survived (what pretenures it).
 */
function oldGenerationGrowth(withSettings: boolean): number {
  const probe = `
    import v8 from 'node:v8';
    ${withSettings ? `await import(${JSON.stringify(settings)});` : ''}
    const make = (i) => ({ id: i, name: 'n', next: null });
    const oldSpace = () => v8.getHeapSpaceStatistics().find((space) => space.space_name === 'old_space').space_used_size;
    let kept = [];
    for (let i = 0; i < 2e6; i++) kept.push(make(i));
    kept = null;
    // Growth summed between readings, so a major collection during the loop does not hide it.
    let grown = 0;
    let last = oldSpace();
    let sink;
    for (let i = 0; i < 2e7; i++) {
      sink = make(i);
      if (i % 100_000 === 0) {
        const now = oldSpace();
        grown += Math.max(0, now - last);
        last = now;
      }
    }
    process.stdout.write(String(grown / 2 ** 20));
  `;
  const result = spawnSync(process.execPath, ['--input-type=module', '-e', probe], { cwd: root, encoding: 'utf8' });
  if (result.status !== 0) throw new Error(result.stderr);
  return Number(result.stdout);
}

// Whether V8 pretenures the site depends on when its young collections fall, so each side is
// probed four times: without the settings at least one probe must grow the old generation
// (the probe can tell), with them none may.
const TRIES = 4;

test("with the service's settings, objects of a site that once survived die young instead of filling the old generation", () => {
  const without = Array.from({ length: TRIES }, () => oldGenerationGrowth(false));
  expect(Math.max(...without)).toBeGreaterThan(2);
  const withSettings = Array.from({ length: TRIES }, () => oldGenerationGrowth(true));
  expect(Math.max(...withSettings)).toBeLessThan(1);
});

test('the service applies them before it loads anything else', () => {
  const firstImport = /^import\s+(?:[^'"]*\s+from\s+)?'([^']+)';/m.exec(readFileSync(path.join(root, 'server/main.ts'), 'utf8'));
  expect(firstImport?.[1]).toBe('./garbage-collection.ts');
});
