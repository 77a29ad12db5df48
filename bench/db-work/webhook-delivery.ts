// PostgreSQL's work per webhook delivery, end to end: an event committed through the outbox
// (emit() inside the caller's transaction, several events per transaction, as the fan-out
// bench writes them), dispatched to its subscriptions' deliveries, sent by a ROLE=worker
// process to a loopback HTTPS receiver answering 200, and recorded delivered. The work of
// writing the events is counted too (a tenth of an event per delivery with the defaults).
//
//   node bench/db-work/webhook-delivery.ts [events]
import { join } from 'node:path';
import { createAccount } from '../../server/accounts/create-account.ts';
import { loadConfig } from '../../server/config.ts';
import { newId } from '../../server/db/ids.ts';
import { emit } from '../../server/events/emit.ts';
import { createLogger } from '../../server/log.ts';
import { createServices } from '../../server/start-service.ts';
import { mintSigningSecret } from '../../server/webhooks/signature.ts';
import { createLocalCa } from '../../test/helpers/local-ca.ts';
import { postgresCpuMs, postmasterPid, processCpuMs } from '../cpu-usage.ts';
import { BENCH_SECRET_KEY } from '../database.ts';
import { atCleanup, cleanUp, tempDir } from '../processes.ts';
import { startWorkerRole } from '../scenarios/servers.ts';
import { startBenchReceiver } from '../webhooks/receiver.ts';
import { measureWork } from './counters.ts';
import { startCountingDatabase } from './counters.ts';

const EVENTS = Number(process.argv[2]) || 1000;
const SUBSCRIPTIONS = 10;
const EVENTS_PER_TRANSACTION = 10;
const CONCURRENT_TRANSACTIONS = 4;
const EVENT_NAME = 'Contact Created';
const DELIVERY_TIMEOUT_MS = 120_000;

try {
  const { url } = await startCountingDatabase();
  const dir = await tempDir('webhook-delivery');
  const config = loadConfig({ DATABASE_URL: url, DATA_DIR: join(dir, 'setup'), SECRET_KEY: BENCH_SECRET_KEY, LOG_LEVEL: 'warn' });
  const services = await createServices(config, createLogger('warn'), url);
  atCleanup(() => services.orm.close());
  const tls = await createLocalCa({ dir, name: 'webhook delivery work', validForMs: 24 * 3600_000 });
  const signingSecret = mintSigningSecret();
  const receiver = await startBenchReceiver(tls, signingSecret);
  atCleanup(() => receiver.close());

  const account = await createAccount(services.orm.em.fork(), services.secrets, { email: `webhook-work-${Date.now()}@example.com` });
  const sealed = services.secrets.seal(signingSecret);
  for (let index = 0; index < SUBSCRIPTIONS; index++) {
    await services.pool.query(
      `insert into webhook_subscriptions (id, account_id, name, url, subscribed_to, subscribed_to_tags, retries_enabled, enabled, apply_to_sub_accounts, signing_secret_sealed, signing_secret_created_at)
       values ($1, $2, $3, $4, $5, '{}', true, true, false, $6, now())`,
      [newId('wh'), account.userId, `work ${index}`, `${receiver.origin}/hooks/${index}`, [EVENT_NAME], sealed],
    );
  }
  const worker = await startWorkerRole(url, { NODE_EXTRA_CA_CERTS: tls.caFile, WEBHOOK_ALLOW_HOSTS: 'localhost,127.0.0.1' });

  /** Emits `count` events and waits until every delivery of theirs is recorded delivered. */
  const run = async (count: number) => {
    const eventIds: string[] = [];
    let next = 0;
    const lane = async () => {
      for (let start = (next += EVENTS_PER_TRANSACTION) - EVENTS_PER_TRANSACTION; start < count; start = (next += EVENTS_PER_TRANSACTION) - EVENTS_PER_TRANSACTION) {
        const size = Math.min(EVENTS_PER_TRANSACTION, count - start);
        const ids = await services.orm.em.fork().transactional(async (tx) => {
          const emitted: string[] = [];
          for (let e = 0; e < size; e++) {
            emitted.push(await emit(tx, account.userId, EVENT_NAME, { contact: { id: newId('ct'), phone_number: '+14155550100', email: null, lists: [] } }));
          }
          return emitted;
        });
        eventIds.push(...ids);
      }
    };
    await Promise.all(Array.from({ length: CONCURRENT_TRANSACTIONS }, lane));
    const deadline = Date.now() + DELIVERY_TIMEOUT_MS;
    for (;;) {
      const { rows } = await services.pool.query<{ n: number }>(
        `select count(*)::int as n from webhook_attempts where event_id = any ($1::text[]) and status_code between 200 and 299`,
        [eventIds],
      );
      if (rows[0]!.n >= eventIds.length * SUBSCRIPTIONS) return;
      if (Date.now() > deadline) throw new Error(`${rows[0]!.n} of ${eventIds.length * SUBSCRIPTIONS} deliveries recorded within ${DELIVERY_TIMEOUT_MS} ms`);
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  };

  await run(Math.min(200, EVENTS));
  const deliveries = EVENTS * SUBSCRIPTIONS;
  // CPU besides the counters: it moves with the machine's load, so compare it only in
  // alternating runs on a quiet machine.
  const postmaster = await postmasterPid(url);
  let cpu = { postgres: 0, worker: 0, seconds: 0 };
  const report = await measureWork(
    url,
    deliveries,
    async () => {
      const postgresBefore = postgresCpuMs(postmaster);
      const workerBefore = processCpuMs(worker.child.pid!);
      const started = performance.now();
      await run(EVENTS);
      cpu = { postgres: postgresCpuMs(postmaster) - postgresBefore, worker: processCpuMs(worker.child.pid!) - workerBefore, seconds: (performance.now() - started) / 1000 };
    },
    0.002,
  );
  console.log(`${EVENTS} events, ${SUBSCRIPTIONS} subscriptions each: per delivery (per event: ×${SUBSCRIPTIONS})`);
  console.log(report.lines.join('\n'));
  console.log(
    `CPU per delivery: PostgreSQL ${((cpu.postgres * 1000) / deliveries).toFixed(0)} µs, worker ${((cpu.worker * 1000) / deliveries).toFixed(0)} µs ` +
      `(${deliveries} deliveries in ${cpu.seconds.toFixed(1)} s, the bench's own polling included)`,
  );
  if (receiver.badSignatures > 0 || receiver.unsigned > 0) throw new Error(`receiver: ${receiver.unsigned} unsigned, ${receiver.badSignatures} bad signatures`);
  await worker.stop();
} finally {
  await cleanUp();
}
process.exit(0);
