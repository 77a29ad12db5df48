// What every scenario shares: the settings from the environment, running one load process,
// medians, and the rows of the report.
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { LoadResult, LoadSpec, LoadTarget } from './load.ts';
import { runNode, tempDir } from './processes.ts';

function positiveInteger(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 1) throw new Error(`${name} must be a positive integer, not ${raw}`);
  return value;
}

export type Settings = {
  durationSeconds: number;
  rounds: number;
  connections: number;
  accounts: number;
  only: string[] | null;
};

export function readSettings(): Settings {
  const only = process.env.BENCH_ONLY?.split(',').map((name) => name.trim()).filter(Boolean);
  return {
    durationSeconds: positiveInteger('BENCH_DURATION', 10),
    rounds: positiveInteger('BENCH_ROUNDS', 5),
    connections: positiveInteger('BENCH_CONNECTIONS', 50),
    accounts: positiveInteger('BENCH_ACCOUNTS', 3000),
    only: only && only.length > 0 ? only : null,
  };
}

export type Row = {
  name: string;
  value: number;
  unit: string;
  baseline?: number;
  /** value / baseline. */
  ratio?: number;
  target?: string;
  met?: boolean;
};

export type ScenarioResult = {
  name: string;
  title: string;
  rows: Row[];
  notes: string[];
  skipped?: string;
};

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

export function ratioRow(name: string, unit: string, full: number, baseline: number, target?: { atLeast?: number; atMost?: number }): Row {
  const ratio = baseline === 0 ? (full === 0 ? 1 : Infinity) : full / baseline;
  const row: Row = { name, value: full, unit, baseline, ratio };
  if (target?.atLeast !== undefined) Object.assign(row, { target: `ratio ≥ ${target.atLeast}`, met: ratio >= target.atLeast });
  if (target?.atMost !== undefined) Object.assign(row, { target: `ratio ≤ ${target.atMost}`, met: ratio <= target.atMost });
  return row;
}

/**
 * Load against the targets, continuing the key rotation (and the new phone numbers) where
 * the previous run stopped, so every key's share of the load stays even over the run.
 */
export class LoadRunner {
  private issued = 0;
  private writes = 0;
  private specDir: string | undefined;
  private runs = 0;
  private readonly targetsFile: string;
  private readonly targets: LoadTarget[];

  constructor(targetsFile: string, targets: LoadTarget[]) {
    this.targetsFile = targetsFile;
    this.targets = targets;
  }

  async run(spec: Omit<LoadSpec, 'targetsFile' | 'offset' | 'writeStart'> & { targetsFile?: string }): Promise<LoadResult> {
    this.specDir ??= await tempDir('load');
    const file = path.join(this.specDir, `spec-${this.runs++}.json`);
    const full: LoadSpec = { targetsFile: this.targetsFile, offset: this.issued, writeStart: this.writes, ...spec };
    await writeFile(file, JSON.stringify(full));
    const stdout = await runNode('bench/load.ts', [file]);
    const result = JSON.parse(stdout.trim().split('\n').at(-1)!) as LoadResult;
    if (full.targetsFile === this.targetsFile) {
      this.issued += result.issued;
      if (spec.kind === 'write-rest') this.writes += result.issued;
      // Each key's 60-second budget is 300 requests: warn well before the rotation gets there.
      const perKeyPerMinute = (result.requestsPerSecond * 60) / this.targets.length;
      if (perKeyPerMinute > 250) {
        process.stderr.write(`warning: ${Math.round(perKeyPerMinute)} requests per key per minute; raise BENCH_ACCOUNTS\n`);
      }
    }
    return result;
  }
}

export function progress(line: string): void {
  process.stderr.write(`${line}\n`);
}
