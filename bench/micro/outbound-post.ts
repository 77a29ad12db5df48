// The sender's CPU per signed webhook POST: the service's outbound client
// (server/outbound/http-client.ts) against a bare undici loop, each in its own process,
// posting the same signed bodies to one HTTPS receiver (another process) with 64 requests in
// flight, in alternating rounds. Only the sending process's CPU is counted.
//
//   node bench/micro/outbound-post.ts [posts per round]
import { spawn, type ChildProcess } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { Agent, request } from 'undici';
import { createOutboundClient } from '../../server/outbound/http-client.ts';
import { deliveryHeaders } from '../../server/webhooks/signature.ts';
import { createLocalCa } from '../../test/helpers/local-ca.ts';
import { atCleanup, cleanUp, tempDir } from '../processes.ts';
import { startBenchReceiver } from '../webhooks/receiver.ts';

const CONCURRENCY = 64;
const SECRET = 'whsec_outbound_micro_bench';
const [mode, ...rest] = process.argv.slice(2);

function body(index: number): string {
  return JSON.stringify({ event: 'Contact Created', event_id: `evt_${index}`, occurred_at: new Date().toISOString(), data: { contact: { id: `ct_${index}`, phone_number: '+14155550100', email: null, lists: [] } }, user: { id: 'usr_bench', email: 'bench@example.com', name: null } });
}

if (mode === 'receiver') {
  const [keyFile, certFile] = rest;
  const receiver = await startBenchReceiver({ key: await readFile(keyFile!, 'utf8'), cert: await readFile(certFile!, 'utf8') }, SECRET);
  process.stdout.write(`${receiver.origin}\n`);
} else if (mode === 'bare' || mode === 'client') {
  const origin = rest[0]!;
  const agent = new Agent({ connections: CONCURRENCY, allowH2: false });
  const client = createOutboundClient({ timeoutMs: 10_000, allowHosts: ['localhost', '127.0.0.1'], maxConcurrentPerOrigin: CONCURRENCY, maxConcurrent: CONCURRENCY * 8 + 1 });
  const post = async (url: string, headers: Record<string, string>, text: string): Promise<boolean> => {
    if (mode === 'client') return (await client.post(url, { headers, body: text })).delivered;
    const response = await request(url, { method: 'POST', headers, body: text, dispatcher: agent });
    await response.body.dump();
    return response.statusCode >= 200 && response.statusCode < 300;
  };
  for await (const line of createInterface({ input: process.stdin })) {
    const count = Number(line.trim());
    let next = 0;
    let failed = 0;
    const cpu = process.cpuUsage();
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        for (let index = next++; index < count; index = next++) {
          const text = body(index);
          const headers = deliveryHeaders({ deliveryId: `dlv_${index}`, attempt: 1, event: 'Contact Created', secret: SECRET, body: text, timestamp: Math.floor(Date.now() / 1000) });
          if (!(await post(`${origin}/hooks/${index % 10}`, headers, text))) failed += 1;
        }
      }),
    );
    const used = process.cpuUsage(cpu);
    process.stdout.write(`${JSON.stringify({ usPerPost: (used.user + used.system) / count, failed })}\n`);
  }
} else {
  try {
    const posts = Number(mode) || 20_000;
    const dir = await tempDir('outbound-post');
    const tls = await createLocalCa({ dir, name: 'outbound post bench', validForMs: 3600_000 });
    await writeFile(join(dir, 'key.pem'), tls.key);
    await writeFile(join(dir, 'cert.pem'), tls.cert);
    const self = new URL(import.meta.url).pathname;
    const start = (args: string[]): ChildProcess => {
      const child = spawn(process.execPath, [self, ...args], { env: { ...process.env, NODE_EXTRA_CA_CERTS: tls.caFile }, stdio: ['pipe', 'pipe', 'inherit'] });
      atCleanup(async () => void child.kill());
      return child;
    };
    const lines = (child: ChildProcess) => createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
    const receiver = start(['receiver', join(dir, 'key.pem'), join(dir, 'cert.pem')]);
    const origin = (await lines(receiver).next()).value as string;
    const senders = { bare: start(['bare', origin]), client: start(['client', origin]) };
    const readers = { bare: lines(senders.bare), client: lines(senders.client) };
    const results: Record<'bare' | 'client', number[]> = { bare: [], client: [] };
    for (let round = 0; round < 6; round++) {
      for (const name of ['bare', 'client'] as const) {
        senders[name].stdin!.write(`${posts}\n`);
        const result = JSON.parse((await readers[name].next()).value as string) as { usPerPost: number; failed: number };
        if (result.failed > 0) throw new Error(`${name}: ${result.failed} posts failed`);
        if (round > 0) results[name].push(result.usPerPost);
      }
    }
    const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
    console.log(`sender CPU per POST (median of 5 rounds of ${posts}): bare undici ${median(results.bare).toFixed(1)} µs, outbound client ${median(results.client).toFixed(1)} µs`);
    console.log(`rounds: bare ${results.bare.map((v) => v.toFixed(0)).join(', ')}; client ${results.client.map((v) => v.toFixed(0)).join(', ')}`);
  } finally {
    await cleanUp();
  }
  process.exit(0);
}
