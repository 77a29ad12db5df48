// How the service's processes hold memory (server/memory-settings.ts): no shared Buffer pool
// where widget sockets are served, and an old generation that may grow to twice its live size
// between full collections.
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
 * Bytes of memory that 1,000 kept 16-byte Buffers hold (their distinct backing stores), each
 * made beside a 3,000-byte one that is dropped (as a statement's protocol message is made
 * beside a row's bytes).
 */
function heldByKeptBuffers(role: 'api' | 'worker' | 'all' | null): number {
  const [held, count] = runProbe(`
    ${role ? `(await import(${JSON.stringify(settings)})).applyMemorySettings(${JSON.stringify(role)});` : ''}
    const kept = [];
    for (let i = 0; i < 1000; i++) {
      kept.push(Buffer.from('sixteen bytes ' + String(i % 10).padStart(2, '0')));
      Buffer.allocUnsafe(3000).fill(i);
    }
    const stores = new Set(kept.map((buffer) => buffer.buffer));
    let held = 0;
    for (const store of stores) held += store.byteLength;
    process.stdout.write(held + ' ' + kept.length);
  `)
    .split(' ')
    .map(Number);
  expect(count).toBe(1000);
  return held!;
}

test('where widget sockets are served, a kept small Buffer holds its own bytes, not a shared slab', () => {
  // Node's default, the control: the kept Buffers pin the slabs their dropped neighbours shared.
  expect(heldByKeptBuffers(null)).toBeGreaterThan(1_000_000);
  // With the settings of an API process, or one that is API and worker: about 16 bytes each.
  expect(heldByKeptBuffers('api')).toBeLessThan(100_000);
  expect(heldByKeptBuffers('all')).toBeLessThan(100_000);
});

test('a worker process, which serves no sockets, keeps the pool', () => {
  expect(heldByKeptBuffers('worker')).toBeGreaterThan(1_000_000);
});

/**
 * The V8 flags the settings module sets in a process started with `nodeArgs`. What the
 * growing factor does to the collections of a heap of 10,000 sockets is measured by the bench
 * (bench/results/history.md): in a small probe, V8's limits moved from machine to machine (a
 * factor of 5% gave 6–8 full collections on one day and 1 on another), so no count is checked.
 */
function flagsSet(nodeArgs: string[]): string[] {
  return JSON.parse(
    runProbe(
      `
    import v8 from 'node:v8';
    const flags = [];
    const setFlags = v8.setFlagsFromString;
    v8.setFlagsFromString = (flag) => { flags.push(flag); setFlags(flag); };
    (await import(${JSON.stringify(settings)})).applyMemorySettings('api');
    process.stdout.write(JSON.stringify(flags));
  `,
      nodeArgs,
    ),
  );
}

test('the old generation is let grow to twice its live size: the growing factor is set to 100%', () => {
  expect(flagsSet([])).toEqual(['--heap-growing-percent=100']);
});

test("a growing factor given on Node's command line is left as given: none is set", () => {
  expect(flagsSet(['--heap-growing-percent=5'])).toEqual([]);
  // Another V8 flag on the command line is not one.
  expect(flagsSet(['--max-semi-space-size=16'])).toEqual(['--heap-growing-percent=100']);
});

test('the service applies them for its role before it starts', () => {
  const main = readFileSync(path.join(root, 'server/main.ts'), 'utf8');
  const applied = main.indexOf('applyMemorySettings(config.ROLE);');
  expect(applied).toBeGreaterThan(main.indexOf('config = loadConfig();'));
  expect(applied).toBeLessThan(main.indexOf('await startService('));
});
