// Scenario `scaleout`: 1, 2 and 3 `ROLE=api` processes on one database, the lookup's load
// spread over them; and whether the shared rate limit stays exact across them.
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import pg from 'pg';
import type { LoadResult, LoadTarget } from '../load.ts';
import { median, progress, ratioRow, type LoadRunner, type Row, type ScenarioResult, type Settings } from '../measure.ts';
import { tempDir } from '../processes.ts';
import { startApiProcess } from './servers.ts';

const MAX_PROCESSES = 3;
const KEY_BUDGET = 300;
const HAMMER_REQUESTS = 450;

/** Waits until the database clock's 60-second window has at least `seconds` left. */
async function waitForWindowRoom(databaseUrl: string, seconds: number): Promise<void> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ into: number }>('select mod(extract(epoch from now()), 60)::float8 as into');
    const left = 60 - rows[0].into;
    if (left < seconds) await new Promise((resolve) => setTimeout(resolve, (left + 0.5) * 1000));
  } finally {
    await client.end();
  }
}

export async function runScaleOutScenario(settings: Settings, databaseUrl: string, loads: LoadRunner, spare: LoadTarget): Promise<ScenarioResult> {
  const servers = [];
  try {
    for (let i = 0; i < MAX_PROCESSES; i++) servers.push(await startApiProcess(databaseUrl));
    const origins = servers.map((server) => server.origin);
    const load = (count: number, durationSeconds = settings.durationSeconds) =>
      loads.run({ urls: origins.slice(0, count), kind: 'read-rest', connections: settings.connections, durationSeconds });

    progress('scaleout: warming up');
    for (let count = 1; count <= MAX_PROCESSES; count++) await load(count, 2);
    const runs: LoadResult[][] = Array.from({ length: MAX_PROCESSES }, () => []);
    for (let round = 1; round <= settings.rounds; round++) {
      for (let count = 1; count <= MAX_PROCESSES; count++) {
        const result = await load(count);
        runs[count - 1].push(result);
        progress(`scaleout: round ${round}/${settings.rounds}, ${count} process(es): ${Math.round(result.requestsPerSecond)} req/s (non-2xx ${result.non2xx})`);
      }
    }
    const perSecond = runs.map((results) => median(results.map((result) => result.requestsPerSecond)));
    const rows: Row[] = [{ name: 'GET /v1/contacts, 1 process: req/s', value: perSecond[0], unit: 'req/s' }];
    for (let count = 2; count <= MAX_PROCESSES; count++) {
      rows.push(ratioRow(`GET /v1/contacts, ${count} processes: req/s (baseline: 1 process)`, 'req/s', perSecond[count - 1], perSecond[0]));
    }
    const failed = runs.flat().reduce((total, run) => total + run.non2xx + run.errors + run.timeouts, 0);
    rows.push({ name: 'non-2xx, errors, time-outs (all rounds)', value: failed, unit: 'count', target: '0', met: failed === 0 });

    // One key hammered across every process within one window: exactly its budget passes.
    progress('scaleout: shared limit check');
    const dir = await tempDir('hammer');
    const targetsFile = path.join(dir, 'targets.json');
    await writeFile(targetsFile, JSON.stringify([{ apiKey: spare.apiKey, listId: '', phones: spare.phones.slice(0, 1) }]));
    await waitForWindowRoom(databaseUrl, 20);
    const hammer = await loads.run({ urls: origins, kind: 'read-rest', connections: 30, durationSeconds: 10, amount: HAMMER_REQUESTS, targetsFile });
    const passed = hammer.statusCodes['200'] ?? 0;
    const refused = hammer.statusCodes['429'] ?? 0;
    rows.push({
      name: `one key, ${HAMMER_REQUESTS} requests over ${MAX_PROCESSES} processes in one window: 2xx`,
      value: passed,
      unit: 'count',
      baseline: KEY_BUDGET,
      ratio: passed / KEY_BUDGET,
      target: `${KEY_BUDGET} ± 1%`,
      met: Math.abs(passed - KEY_BUDGET) <= KEY_BUDGET * 0.01,
    });
    return {
      name: 'scaleout',
      title: 'Scale-out: ROLE=api processes on one database',
      rows,
      notes: [
        `Each process is \`node server/main.ts\` with ROLE=api, its own DATA_DIR and the shared SECRET_KEY; autocannon spreads its ${settings.connections} connections over the processes' ports. The processes, the load and PostgreSQL share the same cores, so more processes add little throughput.`,
        `Limit check: status codes ${JSON.stringify(hammer.statusCodes)} (the rest were refused with 429: ${refused}).`,
      ],
    };
  } finally {
    for (const server of servers) await server.process.stop();
  }
}
