// `npm run test:mutation`: StrykerJS over the rule modules (stryker.config.json; its arguments
// pass through, `--force` for instance), then the gate per module: Stryker's break threshold
// holds for the total only, so a module under it fails the run as well, whatever the total.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

const require = createRequire(import.meta.url);
const root = path.resolve(import.meta.dirname, '..');
const config = JSON.parse(readFileSync(path.join(root, 'stryker.config.json'), 'utf8')) as {
  thresholds: { break: number };
  jsonReporter: { fileName: string };
};

const reportFile = path.join(root, config.jsonReporter.fileName);
// Never judge a report of an earlier run.
rmSync(reportFile, { force: true });
const stryker = path.join(path.dirname(require.resolve('@stryker-mutator/core/package.json')), 'bin/stryker.js');
const run = spawnSync(process.execPath, [stryker, 'run', ...process.argv.slice(2)], { stdio: 'inherit', cwd: root });
if (run.status !== 0) process.exit(run.status ?? 1);

type Report = { files: Record<string, { mutants: { status: string }[] }> };
if (!existsSync(reportFile)) {
  process.stdout.write(`no JSON report at ${config.jsonReporter.fileName}: the per-module gate needs Stryker's json reporter\n`);
  process.exit(1);
}
const report = JSON.parse(readFileSync(reportFile, 'utf8')) as Report;

// Stryker's mutation score: detected (killed, timed out) of those that count (errors and ignored do not).
const DETECTED = new Set(['Killed', 'Timeout']);
const COUNTED = new Set(['Killed', 'Timeout', 'Survived', 'NoCoverage']);
const under: string[] = [];
for (const [file, { mutants }] of Object.entries(report.files)) {
  const counted = mutants.filter((mutant) => COUNTED.has(mutant.status));
  if (counted.length === 0) continue;
  const score = (100 * counted.filter((mutant) => DETECTED.has(mutant.status)).length) / counted.length;
  if (score < config.thresholds.break) under.push(`${file}: ${score.toFixed(2)}%`);
}
if (under.length > 0) {
  process.stdout.write(`mutation score under the break threshold of ${config.thresholds.break} in:\n${under.map((line) => `  ${line}\n`).join('')}`);
  process.exit(1);
}
