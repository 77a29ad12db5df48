// Diagnostics (BENCH_PG_SAMPLE=1): samples what PostgreSQL's active backends are doing, so a
// run can say whether statements wait on locks, on I/O or run on CPU, and which ones.
import pg from 'pg';

export type ActivitySampler = { stop(): Promise<string> };

export async function sampleActivity(databaseUrl: string, everyMs = 20): Promise<ActivitySampler> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  const counts = new Map<string, number>();
  let samples = 0;
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      const { rows } = await client.query<{ wait: string; query: string }>(
        `select coalesce(wait_event_type || ':' || wait_event, 'running') as wait, regexp_replace(left(query, 70), '\\s+', ' ', 'g') as query
         from pg_stat_activity where state = 'active' and pid <> pg_backend_pid() and backend_type = 'client backend'`,
      );
      samples += 1;
      for (const row of rows) {
        const key = `${row.wait} | ${row.query}`;
        counts.set(key, (counts.get(key) ?? 0) + 1);
      }
      await new Promise((resolve) => setTimeout(resolve, everyMs));
    }
  })();
  return {
    async stop() {
      stopped = true;
      await loop;
      await client.end();
      const top = [...counts.entries()].sort((a, b) => b[1] - a[1]).slice(0, 15);
      return [`${samples} samples; active backends per sample, by wait and statement:`, ...top.map(([key, n]) => `  ${(n / samples).toFixed(2)}  ${key}`)].join('\n');
    },
  };
}
