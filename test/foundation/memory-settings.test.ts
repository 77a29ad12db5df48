// How the service's processes hold memory (server/memory-settings.ts): no shared Buffer pool,
// and an old generation that may grow to twice its live size between full collections.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { expect, test } from 'vitest';

const root = path.resolve(import.meta.dirname, '../..');
const settings = pathToFileURL(path.join(root, 'server/memory-settings.ts')).href;

/** Runs `probe` as a module in a child Node process and returns what it wrote. */
function runProbe(probe: string, nodeArgs: string[] = []): string {
  const result = spawnSync(process.execPath, [...nodeArgs, '--input-type=module', '-e', probe], { cwd: root, encoding: 'utf8' });
  if (result.status !== 0) throw new Error(result.stderr);
  return result.stdout;
}

/**
 * Bytes of ArrayBuffer memory still held, after a full collection, by 1,000 kept 16-byte
 * Buffers, each made beside a 3,000-byte one that is dropped (as a statement's protocol
 * message is made beside a row's bytes).
 */
function heldByKeptBuffers(withSettings: boolean): number {
  const [held, count] = runProbe(
    `
    ${withSettings ? `await import(${JSON.stringify(settings)});` : ''}
    globalThis.gc();
    const before = process.memoryUsage().arrayBuffers;
    const kept = [];
    for (let i = 0; i < 1000; i++) {
      kept.push(Buffer.from('sixteen bytes ' + String(i % 10).padStart(2, '0')));
      Buffer.allocUnsafe(3000).fill(i);
    }
    globalThis.gc();
    process.stdout.write(String(process.memoryUsage().arrayBuffers - before) + ' ' + kept.length);
  `,
    ['--expose-gc'],
  )
    .split(' ')
    .map(Number);
  expect(count).toBe(1000);
  return held!;
}

test('a kept small Buffer holds its own bytes, not a shared slab', () => {
  // Node's default, the control: the kept Buffers pin the slabs their dropped neighbours shared.
  expect(heldByKeptBuffers(false)).toBeGreaterThan(1_000_000);
  // With the settings: about 16 bytes each.
  expect(heldByKeptBuffers(true)).toBeLessThan(100_000);
});

/**
 * The V8 flags the settings module sets, and how many full collections the process then makes
 * while its live heap grows from 150 to 250 MB.
 */
function heapGrowth(nodeArgs: string[]): { flags: string[]; fullCollections: number } {
  return JSON.parse(
    runProbe(
      `
    import v8 from 'node:v8';
    import { PerformanceObserver, constants } from 'node:perf_hooks';
    const flags = [];
    const setFlags = v8.setFlagsFromString;
    v8.setFlagsFromString = (flag) => { flags.push(flag); setFlags(flag); };
    await import(${JSON.stringify(settings)});
    let fullCollections = 0;
    const observer = new PerformanceObserver((list) => {
      for (const entry of list.getEntries()) if (entry.detail.kind === constants.NODE_PERFORMANCE_GC_MAJOR) fullCollections += 1;
    });
    observer.observe({ entryTypes: ['gc'] });
    const kept = [];
    const chunk = () => Array.from({ length: 10_000 }, (_, i) => ({ i, text: 'x' + i }));
    while (v8.getHeapStatistics().used_heap_size < 150e6) kept.push(chunk());
    await new Promise((resolve) => setTimeout(resolve, 50));
    fullCollections = 0;
    const start = v8.getHeapStatistics().used_heap_size;
    while (v8.getHeapStatistics().used_heap_size < start + 100e6) {
      kept.push(chunk());
      for (let i = 0; i < 5; i++) chunk();
      await new Promise((resolve) => setImmediate(resolve));
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
    observer.disconnect();
    process.stdout.write(JSON.stringify({ flags, fullCollections }));
  `,
      nodeArgs,
    ),
  );
}

test('the old generation may grow to twice its live size before the next full collection', () => {
  expect(heapGrowth([]).flags).toEqual(['--heap-growing-percent=100']);
});

test("a growing factor given on Node's command line is left as given", () => {
  const given = heapGrowth(['--heap-growing-percent=5']);
  expect(given.flags).toEqual([]);
  // The given 5% is in force: the heap is collected whole again and again as it grows.
  expect(given.fullCollections).toBeGreaterThanOrEqual(3);
});

test('the service applies them before it loads anything else', () => {
  const firstImport = /^import\s+(?:[^'"]*\s+from\s+)?'([^']+)';/m.exec(readFileSync(path.join(root, 'server/main.ts'), 'utf8'));
  expect(firstImport?.[1]).toBe('./memory-settings.ts');
});
