// Scenario `webhooks`: the fan-out benchmark in bench/webhook-fanout.ts, when it exists.
import { access } from 'node:fs/promises';
import path from 'node:path';
import type { Row, ScenarioResult, Settings } from '../measure.ts';
import { root } from '../processes.ts';

type WebhookFanout = (options: { rounds: number; durationSeconds: number }) => Promise<{
  rows: { name: string; value: number; unit: string; baseline?: number; target?: string }[];
  notes?: string[];
}>;

/** A target written as a comparison with a number (`>= 2000`, `< 50`); anything else is not judged. */
function meets(value: number, target: string | undefined): boolean | undefined {
  const match = target ? /^\s*(>=|<=|≥|≤|<|>)\s*(-?[\d.]+)/.exec(target) : null;
  if (!match) return undefined;
  const bound = Number(match[2]);
  switch (match[1]) {
    case '>=':
    case '≥':
      return value >= bound;
    case '<=':
    case '≤':
      return value <= bound;
    case '<':
      return value < bound;
    default:
      return value > bound;
  }
}

export async function runWebhooksScenario(settings: Settings): Promise<ScenarioResult> {
  const file = path.join(root, 'bench', 'webhook-fanout.ts');
  const result: ScenarioResult = { name: 'webhooks', title: 'Webhook fan-out', rows: [], notes: [] };
  try {
    await access(file);
  } catch {
    return { ...result, skipped: 'bench/webhook-fanout.ts does not exist yet' };
  }
  const module = (await import(file)) as { runWebhookFanout?: WebhookFanout };
  if (typeof module.runWebhookFanout !== 'function') {
    return { ...result, skipped: 'bench/webhook-fanout.ts does not export runWebhookFanout' };
  }
  const fanout = await module.runWebhookFanout({ rounds: settings.rounds, durationSeconds: settings.durationSeconds });
  const rows: Row[] = fanout.rows.map((row) => {
    if (row.baseline === undefined) return { name: row.name, value: row.value, unit: row.unit, target: row.target, met: meets(row.value, row.target) };
    // A target on the ratio to the baseline (`ratio >= 0.5`).
    const ratio = row.baseline === 0 ? Infinity : row.value / row.baseline;
    const bound = row.target?.replace(/^\s*ratio\s*/, '');
    return { name: row.name, value: row.value, unit: row.unit, baseline: row.baseline, ratio, target: row.target, met: meets(ratio, bound) };
  });
  return { ...result, rows, notes: ['Figures and targets as bench/webhook-fanout.ts reports them.', ...(fanout.notes ?? [])] };
}
