// The baseline of the webhook fan-out figure: a bare loop that signs and POSTs the same
// deliveries to the same receiver, as fast as it can, with the service's per-origin
// concurrency, and nothing else (no database, no queue, no delivery records). The service
// does the same from committed events, with claims, leases and recorded outcomes.
//
// Environment: BARE_SENDER (JSON: accounts [{ id, email, urls }], secret, concurrency);
// NODE_EXTRA_CA_CERTS trusts the receiver. Prints `bare sender ready`, then per stdin line
// `run <seconds>` one JSON line: { deliveries, seconds, failures }.
import { createInterface } from 'node:readline';
import { performance } from 'node:perf_hooks';
import { randomUUID } from 'node:crypto';
import { Agent, request } from 'undici';
import { deliveryHeaders } from '../../server/webhooks/signature.ts';

type Account = { id: string; email: string; urls: string[] };
type Settings = { accounts: Account[]; secret: string; concurrency: number };

const settings = JSON.parse(process.env.BARE_SENDER ?? 'null') as Settings | null;
if (!settings) throw new Error('BARE_SENDER is required');
const EVENT_NAME = 'Contact Created';

// As the service's outbound client: HTTP/1.1, one pooled connection per request in flight.
const agent = new Agent({ connections: settings.concurrency, allowH2: false });

/** The deliveries of one event: one per subscription of the account, the same body to each. */
function* deliveries(): Generator<{ url: string; id: string; body: string }> {
  for (let index = 0; ; index++) {
    const account = settings!.accounts[index % settings!.accounts.length]!;
    const eventId = `evt_${randomUUID()}`;
    const body = JSON.stringify({
      event: EVENT_NAME,
      event_id: eventId,
      occurred_at: new Date().toISOString(),
      data: { contact: { id: `ct_${randomUUID()}`, phone_number: '+14155550100', email: null, lists: [] } },
      user: { id: account.id, email: account.email, name: null },
    });
    for (const url of account.urls) yield { url, id: `dlv_${randomUUID()}`, body };
  }
}

async function run(seconds: number): Promise<{ deliveries: number; seconds: number; failures: number }> {
  const source = deliveries();
  const started = performance.now();
  const endAt = started + seconds * 1000;
  let delivered = 0;
  let failures = 0;
  const loop = async () => {
    while (performance.now() < endAt) {
      const delivery = source.next().value!;
      const headers = deliveryHeaders({ deliveryId: delivery.id, attempt: 1, event: EVENT_NAME, secret: settings!.secret, body: delivery.body, timestamp: Math.floor(Date.now() / 1000) });
      try {
        const response = await request(delivery.url, { method: 'POST', headers, body: delivery.body, dispatcher: agent });
        await response.body.dump();
        if (response.statusCode >= 200 && response.statusCode < 300) delivered += 1;
        else failures += 1;
      } catch {
        failures += 1;
      }
    }
  };
  await Promise.all(Array.from({ length: settings!.concurrency }, loop));
  return { deliveries: delivered, seconds: (performance.now() - started) / 1000, failures };
}

process.stdout.write('bare sender ready\n');
for await (const line of createInterface({ input: process.stdin })) {
  const match = /^run ([\d.]+)$/.exec(line.trim());
  if (!match) continue;
  process.stdout.write(`${JSON.stringify(await run(Number(match[1])))}\n`);
}
await agent.close();
