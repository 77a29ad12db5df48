// Scenario `read`: what the whole service (rate limits included) costs over a bare route
// doing only the two reads a lookup needs (the key by its HMAC, the contact by phone), for
// the REST and tRPC contact lookups: their targets. Beside it, for information, what the
// REST surface and tRPC cost over a bare route doing the service's own authentication
// statement, and the same for creating a contact on a list.
import type { LoadResult, LoadSpec } from '../load.ts';
import { median, progress, ratioRow, type LoadRunner, type Row, type ScenarioResult, type Settings } from '../measure.ts';
import { startApiProcess, startBareServer } from './servers.ts';
import { postgresCpuMs, postmasterPid, processCpuMs } from '../cpu-usage.ts';

type Pair = { label: string; kind: LoadSpec['kind']; bareKind: LoadSpec['kind']; targets: boolean; twoReads: boolean };

const PAIRS: Pair[] = [
  { label: 'GET /v1/contacts (REST lookup)', kind: 'read-rest', bareKind: 'read-rest', targets: true, twoReads: true },
  { label: 'GET /trpc/contacts.find (tRPC lookup)', kind: 'read-trpc', bareKind: 'read-rest', targets: true, twoReads: true },
  // The write has no target of its own; its ratios are reported for comparison.
  { label: 'POST /v1/contacts with listId (write)', kind: 'write-rest', bareKind: 'write-rest', targets: false, twoReads: false },
];

const WARM_UP_SECONDS = 2;

/** BENCH_READ_KINDS=read-trpc,... measures only those figures (to profile one path alone). */
function selectedPairs(): Pair[] {
  const kinds = process.env.BENCH_READ_KINDS?.split(',').map((kind) => kind.trim());
  return kinds ? PAIRS.filter((pair) => kinds.includes(pair.kind)) : PAIRS;
}

export async function runReadScenario(settings: Settings, databaseUrl: string, loads: LoadRunner): Promise<ScenarioResult> {
  const pairs = selectedPairs();
  const service = await startApiProcess(databaseUrl);
  const bare = await startBareServer(databaseUrl, service.dataDir, 'counting');
  const twoReads = await startBareServer(databaseUrl, service.dataDir, 'two-reads');
  try {
    const load = (origin: string, kind: LoadSpec['kind'], durationSeconds = settings.durationSeconds) =>
      loads.run({ urls: [origin], kind, connections: settings.connections, durationSeconds });

    progress('read: warming up');
    for (const pair of pairs) {
      await load(bare.origin, pair.bareKind, WARM_UP_SECONDS);
      if (pair.twoReads) await load(twoReads.origin, pair.bareKind, WARM_UP_SECONDS);
      await load(service.origin, pair.kind, WARM_UP_SECONDS);
    }

    const postmaster = await postmasterPid(databaseUrl);
    // CPU milliseconds per request of the server process and of PostgreSQL during one load.
    type Measured = LoadResult & { serverCpuMs: number; postgresCpuMs: number };
    const measured = async (server: typeof service, kind: LoadSpec['kind']): Promise<Measured> => {
      const pid = server.process.child.pid!;
      const before = { server: processCpuMs(pid), postgres: postgresCpuMs(postmaster) };
      const result = await load(server.origin, kind);
      const requests = Math.max(1, result.requests);
      return {
        ...result,
        serverCpuMs: (processCpuMs(pid) - before.server) / requests,
        postgresCpuMs: (postgresCpuMs(postmaster) - before.postgres) / requests,
      };
    };
    const results = pairs.map(() => ({ bare: [] as Measured[], twoReads: [] as Measured[], full: [] as Measured[] }));
    for (let round = 1; round <= settings.rounds; round++) {
      for (const [index, pair] of pairs.entries()) {
        const bareResult = await measured(bare, pair.bareKind);
        const twoReadsResult = pair.twoReads ? await measured(twoReads, pair.bareKind) : null;
        const fullResult = await measured(service, pair.kind);
        results[index].bare.push(bareResult);
        if (twoReadsResult) results[index].twoReads.push(twoReadsResult);
        results[index].full.push(fullResult);
        const twoReadsNote = twoReadsResult ? `two reads ${Math.round(twoReadsResult.requestsPerSecond)} req/s, ` : '';
        progress(
          `read: round ${round}/${settings.rounds} ${pair.label}: bare ${Math.round(bareResult.requestsPerSecond)} req/s, ${twoReadsNote}` +
            `full ${Math.round(fullResult.requestsPerSecond)} req/s (non-2xx ${bareResult.non2xx}/${fullResult.non2xx})`,
        );
      }
    }

    const rows: Row[] = [];
    const notes: string[] = [];
    for (const [index, pair] of pairs.entries()) {
      const { bare: bareRuns, twoReads: twoReadsRuns, full: fullRuns } = results[index];
      const of = (runs: Measured[], pick: (run: Measured) => number) => median(runs.map(pick));
      const target = pair.targets;
      const rowsAgainst = (prefix: string, baseRuns: Measured[], targets: boolean) => [
        ratioRow(`${prefix}: req/s`, 'req/s', of(fullRuns, (r) => r.requestsPerSecond), of(baseRuns, (r) => r.requestsPerSecond), targets ? { atLeast: 1.0 } : undefined),
        ratioRow(`${prefix}: p50`, 'ms', of(fullRuns, (r) => r.p50), of(baseRuns, (r) => r.p50)),
        ratioRow(`${prefix}: p99`, 'ms', of(fullRuns, (r) => r.p99), of(baseRuns, (r) => r.p99), targets ? { atMost: 1.1 } : undefined),
        ratioRow(`${prefix}: CPU per request, server process`, 'ms', of(fullRuns, (r) => r.serverCpuMs), of(baseRuns, (r) => r.serverCpuMs)),
        ratioRow(`${prefix}: CPU per request, PostgreSQL`, 'ms', of(fullRuns, (r) => r.postgresCpuMs), of(baseRuns, (r) => r.postgresCpuMs)),
      ];
      if (pair.twoReads) {
        // The targets stand against the two-read route; the counting route's ratios are for information.
        rows.push(...rowsAgainst(`${pair.label} over the two-read route`, twoReadsRuns, target));
        rows.push(...rowsAgainst(`${pair.label} over the counting route (information)`, bareRuns, false));
      } else {
        rows.push(...rowsAgainst(pair.label, bareRuns, false));
      }
      const sum = (runs: LoadResult[]) => runs.reduce((total, run) => total + run.non2xx + run.errors + run.timeouts, 0);
      const failed = sum(fullRuns);
      rows.push({ name: `${pair.label}: non-2xx, errors, time-outs (all rounds)`, value: failed, unit: 'count', baseline: sum(bareRuns), target: '0', met: failed === 0 });
      if (failed > 0) {
        const codes = fullRuns.map((run) => JSON.stringify(run.statusCodes)).join(', ');
        notes.push(`${pair.label}: status codes of the full stack's rounds: ${codes}`);
      }
    }
    notes.push(
      'Two-read baseline (the lookups\' targets): bench/bare-server.ts with BARE_MODE=two-reads, bare fastify over HTTPS with `pg`, ' +
        'reading only the key by its HMAC (joined to its account for the plan, not revoked, not expired) and then the contact by ' +
        'phone, with no rate-limit accounting at all: the floor a lookup cannot go below. Targets: ≥ 1.0 of its req/s, p99 ≤ 1.1×. ' +
        'Full stack: `node server/main.ts` with ROLE=api on the same database. Both use HTTPS and a 10-connection pool.',
      'Counting baseline (information for the lookups; the write\'s baseline): the same bare server with BARE_MODE=counting, ' +
        "resolving the key and spending its rate limits with the service's own statement (server/rate-limit/spend-key-tokens.ts) " +
        'before reading the contact (the write: inserting the contact, its contact_lists row and its Contact Created outbox event ' +
        'in one transaction, the rows the service writes), so its ratios show the framework alone.',
    );
    return { name: 'read', title: 'REST and tRPC overhead over a bare route', rows, notes };
  } finally {
    await bare.process.stop();
    await twoReads.process.stop();
    await service.process.stop();
  }
}
