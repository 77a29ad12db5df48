// `npm run bench`: runs the scenarios (all, or BENCH_ONLY's), each figure beside a baseline
// measured in the same run, and writes bench/results/latest.{md,json}.
//
// Knobs: BENCH_DURATION (seconds per round, 10), BENCH_ROUNDS (5), BENCH_CONNECTIONS (50),
// BENCH_ONLY (comma list of read, scaleout, startup, webhooks, push, assets, events), BENCH_ACCOUNTS (3000),
// BENCH_SERVER_CPUS (servers and PostgreSQL held to these CPUs, e.g. `0`; bench/cpu-pinning.ts),
// BENCH_REPORT (the report's file name, `latest`, or `pinned` for a pinned run).
import { writeFile } from 'node:fs/promises';
import { pinLoad } from './cpu-pinning.ts';
import { seedAccounts, startBenchDatabase } from './database.ts';
import type { LoadTarget } from './load.ts';
import { LoadRunner, progress, readSettings, type ScenarioResult, type Settings } from './measure.ts';
import { cleanUp } from './processes.ts';
import { readConditions, reportName, writeReport } from './report.ts';
import { runReadScenario } from './scenarios/read.ts';
import { runScaleOutScenario } from './scenarios/scaleout.ts';
import { runStartupScenario } from './scenarios/startup.ts';
import { runWebhooksScenario } from './scenarios/webhooks.ts';
import { runPushScenario } from './scenarios/push.ts';
import { runAssetsScenario } from './scenarios/assets.ts';
import { runEventsScenario } from './scenarios/events.ts';

type Seeded = { databaseUrl: string; loads: LoadRunner; spare: LoadTarget };

const SCENARIOS: { name: string; run: (settings: Settings, seeded: () => Promise<Seeded>) => Promise<ScenarioResult> }[] = [
  { name: 'read', run: async (settings, seeded) => { const s = await seeded(); return runReadScenario(settings, s.databaseUrl, s.loads); } },
  { name: 'scaleout', run: async (settings, seeded) => { const s = await seeded(); return runScaleOutScenario(settings, s.databaseUrl, s.loads, s.spare); } },
  { name: 'startup', run: (settings) => runStartupScenario(settings) },
  { name: 'webhooks', run: (settings) => runWebhooksScenario(settings) },
  { name: 'push', run: async (settings, seeded) => { const s = await seeded(); return runPushScenario(settings, s.databaseUrl, s.spare.apiKey); } },
  { name: 'assets', run: () => runAssetsScenario() },
  { name: 'events', run: async (settings, seeded) => { const s = await seeded(); return runEventsScenario(settings, s.databaseUrl); } },
];

async function main() {
  const settings = readSettings();
  // This process drives load and receives webhooks: it is the load's side.
  pinLoad(process.pid);
  const unknown = settings.only?.filter((name) => !SCENARIOS.some((scenario) => scenario.name === name)) ?? [];
  if (unknown.length) throw new Error(`BENCH_ONLY names unknown scenarios: ${unknown.join(', ')}`);
  const conditions = readConditions(settings);

  // One database for the scenarios that need one, started and seeded on first use.
  let seeding: Promise<Seeded> | undefined;
  const seeded = () =>
    (seeding ??= (async () => {
      progress('starting the embedded PostgreSQL');
      const database = await startBenchDatabase();
      progress(`seeding ${settings.accounts} accounts`);
      const started = performance.now();
      // One more account than the rotation uses: its key is the scale-out limit check's own.
      const { targetsFile, targets } = await seedAccounts(database.url, settings.accounts + 1);
      const spare = targets.pop()!;
      await writeFile(targetsFile, JSON.stringify(targets));
      progress(`seeded in ${((performance.now() - started) / 1000).toFixed(1)} s`);
      return { databaseUrl: database.url, loads: new LoadRunner(targetsFile, targets), spare };
    })());

  const results: ScenarioResult[] = [];
  for (const scenario of SCENARIOS) {
    if (settings.only && !settings.only.includes(scenario.name)) continue;
    progress(`scenario ${scenario.name}`);
    try {
      results.push(await scenario.run(settings, seeded));
    } catch (error) {
      // The other scenarios still run; the report says which one failed and why.
      progress(`scenario ${scenario.name} failed: ${(error as Error).stack ?? error}`);
      results.push({ name: scenario.name, title: scenario.name, rows: [], notes: [], skipped: `failed: ${(error as Error).message.split('\n')[0]}` });
      process.exitCode = 1;
    }
  }
  const markdown = await writeReport(results, conditions);
  process.stdout.write(`${markdown}\nWritten to bench/results/${reportName(conditions)}.md and .json\n`);
}

try {
  await main();
} catch (error) {
  process.stderr.write(`bench failed: ${(error as Error).stack ?? error}\n`);
  process.exitCode = 1;
} finally {
  await cleanUp();
}
