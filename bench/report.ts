// The run's report: bench/results/latest.json (everything) and latest.md (one table per
// scenario, then the conditions); a pinned run's go to pinned.json and pinned.md.
import { execFileSync } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { cpus, loadavg, totalmem } from 'node:os';
import path from 'node:path';
import type { Row, ScenarioResult, Settings } from './measure.ts';
import { pinningCondition } from './cpu-pinning.ts';
import { root } from './processes.ts';

export type Conditions = {
  date: string;
  cores: number;
  cpuModel: string;
  memoryGiB: number;
  node: string;
  commit: string;
  /** Uncommitted changes in the tree when the run started. */
  dirty: boolean;
  loadAverageAtStart: number[];
  /** Where the servers and PostgreSQL were held (BENCH_SERVER_CPUS); null when they were not. */
  pinning: string | null;
  settings: Settings;
};

function git(args: string[]): string {
  try {
    return execFileSync('git', args, { cwd: root, encoding: 'utf8' }).trim();
  } catch {
    return 'unknown';
  }
}

export function readConditions(settings: Settings): Conditions {
  return {
    date: new Date().toISOString(),
    cores: cpus().length,
    cpuModel: cpus()[0]?.model ?? 'unknown',
    memoryGiB: Math.round(totalmem() / 2 ** 30),
    node: process.version,
    commit: git(['rev-parse', 'HEAD']),
    dirty: git(['status', '--porcelain', '--untracked-files=no']) !== '',
    loadAverageAtStart: loadavg().map((value) => Math.round(value * 100) / 100),
    pinning: pinningCondition(),
    settings,
  };
}

function format(value: number | undefined, unit?: string): string {
  if (value === undefined) return '—';
  if (!Number.isFinite(value)) return String(value);
  const digits = unit === 'count' || Math.abs(value) >= 100 ? 0 : Math.abs(value) >= 10 ? 1 : 2;
  const text = value.toFixed(digits);
  return unit && unit !== 'count' && unit !== 'ratio' ? `${text} ${unit}` : text;
}

function tableRow(row: Row): string {
  const met = row.met === undefined ? '' : row.met ? 'yes' : '**no**';
  return `| ${row.name} | ${format(row.value, row.unit)} | ${format(row.baseline, row.unit)} | ${format(row.ratio)} | ${row.target ?? ''} | ${met} |`;
}

export function renderMarkdown(scenarios: ScenarioResult[], conditions: Conditions): string {
  const lines: string[] = [];
  for (const scenario of scenarios) {
    lines.push(`### \`${scenario.name}\`: ${scenario.title}`, '');
    if (scenario.skipped) {
      lines.push(`Skipped: ${scenario.skipped}.`, '');
      continue;
    }
    lines.push('| figure | full stack | baseline | ratio | target | met? |', '|---|---|---|---|---|---|');
    for (const row of scenario.rows) lines.push(tableRow(row));
    lines.push('');
    for (const note of scenario.notes) lines.push(`- ${note}`);
    if (scenario.notes.length) lines.push('');
  }
  const { settings } = conditions;
  lines.push(
    '### Conditions',
    '',
    `- ${conditions.cores} cores (${conditions.cpuModel}), ${conditions.memoryGiB} GiB; load average at start ${conditions.loadAverageAtStart.join(' / ')}`,
    `- Node ${conditions.node}; commit \`${conditions.commit.slice(0, 12)}\`${conditions.dirty ? ' with uncommitted changes' : ''}; ${conditions.date}`,
    `- ${settings.rounds} alternating rounds (baseline, full, baseline, full, …) of ${settings.durationSeconds} s, ` +
      `${settings.connections} connections, medians reported; ${settings.accounts} seeded accounts whose keys the load rotates through`,
    conditions.pinning
      ? `- Load from autocannon in its own process (bench/load.ts); ${conditions.pinning}`
      : '- Load from autocannon in its own process (bench/load.ts); servers, load and PostgreSQL share the machine',
    '',
  );
  return lines.join('\n');
}

/** The report's file name: a pinned run sits beside the latest one, not over it, so the two are read together. */
export function reportName(conditions: Conditions): string {
  return process.env.BENCH_REPORT || (conditions.pinning ? 'pinned' : 'latest');
}

export async function writeReport(scenarios: ScenarioResult[], conditions: Conditions): Promise<string> {
  const dir = path.join(root, 'bench', 'results');
  await mkdir(dir, { recursive: true });
  const markdown = renderMarkdown(scenarios, conditions);
  const name = reportName(conditions);
  await writeFile(path.join(dir, `${name}.json`), `${JSON.stringify({ conditions, scenarios }, null, 2)}\n`);
  await writeFile(path.join(dir, `${name}.md`), `# Benchmark results${conditions.pinning ? ' (pinned)' : ''}\n\n${markdown}`);
  return markdown;
}
