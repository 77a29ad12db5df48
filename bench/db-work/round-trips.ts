// Round trips to PostgreSQL of the service processes a db-work script starts, counted in
// each process where pg sends them (round-trip-preload.ts): statements sent behind others
// before their answers (pipelined, or several in one query string) are one round trip.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { tempDir } from '../processes.ts';

export type RoundTripCounter = {
  /** The environment that has a process count its round trips; one per process. */
  env(name: string): Record<string, string>;
  /** Round trips so far by process name (written every 100 ms: read a moment after the work). */
  count(): Promise<Record<string, number>>;
};

const PRELOAD = path.join(import.meta.dirname, 'round-trip-preload.ts');
/** Longer than the processes' write interval. */
export const COUNT_SETTLE_MS = 300;

export async function roundTripCounter(): Promise<RoundTripCounter> {
  const dir = await tempDir('round-trips');
  const files = new Map<string, string>();
  return {
    env(name) {
      const file = path.join(dir, `${name}.count`);
      files.set(name, file);
      return { NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --import=${PRELOAD}`.trim(), ROUND_TRIPS_FILE: file };
    },
    async count() {
      await new Promise((resolve) => setTimeout(resolve, COUNT_SETTLE_MS));
      const counts = await Promise.all([...files].map(async ([name, file]) => [name, await readFile(file, 'utf8').then(Number, () => 0)] as const));
      return Object.fromEntries(counts);
    },
  };
}
