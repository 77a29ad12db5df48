// `npm test`: typecheck (Node's type stripping does not), then the whole vitest
// suite, then the one plain line CI reads: `N passed, N failed`.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';

const require = createRequire(import.meta.url);
const root = path.resolve(import.meta.dirname, '..');
const extraArgs = process.argv.slice(2);

function bin(packageName: string, relative: string): string {
  return path.join(path.dirname(require.resolve(`${packageName}/package.json`)), relative);
}

let typecheckFailed = 0;
if (!extraArgs.length) {
  const tsc = spawnSync(process.execPath, [bin('typescript', 'bin/tsc'), '--noEmit', '-p', root], { stdio: 'inherit', cwd: root });
  if (tsc.status !== 0) {
    typecheckFailed = 1;
    process.stdout.write('typecheck failed (tsc --noEmit)\n');
  }
}

const outDir = mkdtempSync(path.join(tmpdir(), 'mapi-results-'));
const outputFile = path.join(outDir, 'results.json');
const vitest = spawnSync(
  process.execPath,
  [bin('vitest', 'vitest.mjs'), 'run', '--reporter=default', '--reporter=json', `--outputFile.json=${outputFile}`, ...extraArgs],
  { stdio: 'inherit', cwd: root, env: { ...process.env, FORCE_COLOR: process.env.CI ? '0' : process.env.FORCE_COLOR } },
);

let passed = 0;
let failed = typecheckFailed;
let skipped = 0;
try {
  const results = JSON.parse(readFileSync(outputFile, 'utf8')) as {
    numPassedTests: number;
    numFailedTests: number;
    numPendingTests: number;
    numTodoTests: number;
    numFailedTestSuites: number;
    numTotalTests: number;
  };
  passed = results.numPassedTests;
  failed += results.numFailedTests;
  skipped = results.numPendingTests + results.numTodoTests;
  // A file that fails to load has no tests to count; count it as a failure.
  if (results.numFailedTestSuites > 0 && results.numFailedTests === 0) failed += results.numFailedTestSuites;
} catch {
  failed += 1;
  process.stdout.write('vitest wrote no results\n');
}
rmSync(outDir, { recursive: true, force: true });

process.stdout.write(`\n${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}\n`);
process.exit(failed > 0 || vitest.status !== 0 || passed === 0 ? 1 : 0);
