// Scenario `startup`: what `npm start` takes on a warm DATA_DIR (the embedded cluster already
// initialised), from spawning `node server/main.ts` to the first 200 on /v1/health.
import { request } from 'node:https';
import { median, progress, type ScenarioResult, type Settings } from '../measure.ts';
import { freePort, startNode, tempDir } from '../processes.ts';

function healthStatus(port: number): Promise<number> {
  return new Promise((resolve) => {
    const req = request({ host: '127.0.0.1', port, path: '/v1/health', rejectUnauthorized: false, timeout: 1000 }, (response) => {
      response.resume();
      resolve(response.statusCode ?? 0);
    });
    req.on('error', () => resolve(0));
    req.on('timeout', () => req.destroy());
    req.end();
  });
}

/** Milliseconds from spawn to the first 200 on /v1/health; the process is stopped afterwards. */
async function timeStart(dataDir: string): Promise<number> {
  const port = await freePort();
  const started = performance.now();
  // Resolves on the first byte of output (or never, if the service prints nothing); the
  // health poll below is what is timed.
  const service = startNode('server/main.ts', { DATA_DIR: dataDir, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn' }, /listening on/);
  let failure: Error | undefined;
  service.catch((error: Error) => (failure = error));
  try {
    for (;;) {
      if (failure) throw failure;
      if ((await healthStatus(port)) === 200) return performance.now() - started;
      if (performance.now() - started > 120_000) throw new Error('no 200 on /v1/health within 2 minutes');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  } finally {
    await service.then((running) => running.stop(), () => {});
  }
}

export async function runStartupScenario(settings: Settings): Promise<ScenarioResult> {
  const dataDir = await tempDir('startup');
  progress('startup: first start (initialises the cluster)');
  const cold = await timeStart(dataDir);
  const warm: number[] = [];
  for (let run = 1; run <= Math.max(3, settings.rounds); run++) {
    warm.push(await timeStart(dataDir));
    progress(`startup: warm start ${run}: ${Math.round(warm.at(-1)!)} ms`);
  }
  const warmMedian = median(warm) / 1000;
  return {
    name: 'startup',
    title: 'Start-up to the first 200 on /v1/health',
    rows: [
      { name: 'warm DATA_DIR (median)', value: warmMedian, unit: 's', target: '< 3 s', met: warmMedian < 3 },
      { name: 'first start, cluster initialised (one run)', value: cold / 1000, unit: 's' },
    ],
    notes: [
      `\`node server/main.ts\` (ROLE=all: API and worker), embedded PostgreSQL on its own DATA_DIR, timed from spawn to the first 200; warm runs: ${warm
        .map((ms) => `${(ms / 1000).toFixed(2)} s`)
        .join(', ')}. No baseline: the figure is absolute.`,
    ],
  };
}
