// Scenario `push`: chat-widget push latency, a visitor message posted -> the same message
// received by that visitor's socket, with many visitors connected, against a bare Socket.IO
// relay on fastify doing only the emit, in alternating rounds.
import path from 'node:path';
import { request } from 'undici';
import { Agent } from 'undici';
import { median, progress, ratioRow, type ScenarioResult, type Settings } from '../measure.ts';
import { freePort, runNode, startNode } from '../processes.ts';
import { startApiProcess } from './servers.ts';

const VISITORS = 1_000;
const WIDGETS = 20;
const MESSAGES_PER_SECOND = 100;
const insecure = new Agent({ connect: { rejectUnauthorized: false } });

type DriverResult = { sent: number; received: number; errors: number; lost: number; p50: number; p99: number };

async function api(origin: string, method: string, pathname: string, apiKey: string | null, body?: unknown) {
  const response = await request(origin + pathname, {
    method: method as 'GET',
    dispatcher: insecure,
    headers: { 'content-type': 'application/json', ...(apiKey ? { 'x-api-key': apiKey } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = (await response.body.json()) as Record<string, any>;
  if (response.statusCode >= 300) throw new Error(`${method} ${pathname}: ${response.statusCode} ${JSON.stringify(json)}`);
  return json;
}

export async function runPushScenario(settings: Settings, databaseUrl: string, apiKey: string): Promise<ScenarioResult> {
  // ROLE=api: the visitor's own message is pushed by the request's transaction; no worker
  // runs, so the bot's replies queue up instead of adding load to this figure.
  // Every simulated visitor connects from loopback: the per-address widget limits would see one client.
  const oneAddressForAll = '1000000';
  const service = await startApiProcess(databaseUrl, {
    WIDGET_REQUESTS_PER_IP_PER_MINUTE: oneAddressForAll,
    WIDGET_MESSAGES_PER_IP_PER_MINUTE: oneAddressForAll,
    WIDGET_NEW_VISITORS_PER_IP_PER_MINUTE: oneAddressForAll,
    WIDGET_SOCKETS_PER_IP: oneAddressForAll,
  });
  const relayPort = await freePort();
  const relay = await startNode(
    'bench/push/bare-relay.ts',
    { PORT: String(relayPort), TLS_CERT_FILE: path.join(service.dataDir, 'tls-cert.pem'), TLS_KEY_FILE: path.join(service.dataDir, 'tls-key.pem') },
    /relay listening on (https:\/\/\S+)/,
  );
  try {
    const widgets: string[] = [];
    for (let index = 0; index < WIDGETS; index++) {
      const created = await api(service.origin, 'POST', '/v1/chat-widgets', apiKey, { name: `bench widget ${index}`, settings: {} });
      widgets.push(created.data.id);
    }
    const config = await api(service.origin, 'GET', `/v1/chat-widget-config?configId=${encodeURIComponent(widgets[0]!)}`, null);
    const ownerId = String(config.data.userId);

    const drive = async (origin: string, postPath: string, runId: string): Promise<DriverResult> => {
      const output = await runNode('bench/push/driver.ts', [
        JSON.stringify({ origin, postPath, widgets, visitors: VISITORS, messagesPerSecond: MESSAGES_PER_SECOND, durationSeconds: settings.durationSeconds, runId }),
      ]);
      return JSON.parse(output.trim().split('\n').at(-1)!) as DriverResult;
    };
    const bare: DriverResult[] = [];
    const full: DriverResult[] = [];
    for (let round = 1; round <= settings.rounds; round++) {
      progress(`push: round ${round} of ${settings.rounds}`);
      bare.push(await drive(new URL(relay.ready[1]).origin, '/relay', `b${round}`));
      full.push(await drive(service.origin, `/v1/incoming-chat-widget-message?userId=${encodeURIComponent(ownerId)}`, `f${round}`));
      progress(`push: bare ${JSON.stringify(bare.at(-1))}, service ${JSON.stringify(full.at(-1))}`);
    }
    const failures = (results: DriverResult[]) => results.reduce((sum, result) => sum + result.errors + result.lost, 0);
    const label = `push, ${VISITORS.toLocaleString('en')} visitors connected, ${MESSAGES_PER_SECOND} messages/s`;
    return {
      name: 'push',
      title: 'Chat-widget push latency: visitor message posted -> pushed to its socket',
      rows: [
        ratioRow(`${label}: p50`, 'ms', median(full.map((r) => r.p50)), median(bare.map((r) => r.p50))),
        { ...ratioRow(`${label}: p99`, 'ms', median(full.map((r) => r.p99)), median(bare.map((r) => r.p99))), target: '< 50 ms', met: median(full.map((r) => r.p99)) < 50 },
        { name: 'non-200 answers and messages never pushed (all rounds)', value: failures(full), unit: '', baseline: failures(bare), target: '0', met: failures(full) === 0 },
      ],
      notes: [
        `Service: \`node server/main.ts\` with ROLE=api; each message is a POST /v1/incoming-chat-widget-message that stores the message, queues its job and publishes it with pg_notify in one transaction; the process LISTENing emits it to the visitor's Socket.IO room. ${WIDGETS} widgets, ${VISITORS} visitors on WebSocket transport, one message per visitor per ${VISITORS / MESSAGES_PER_SECOND} s, after 2 s of the same traffic that is not measured.`,
        'Baseline: bench/push/bare-relay.ts, fastify over HTTPS with Socket.IO on the same server, emitting the posted message to the room directly (no database). The clients and the poster run in their own process (bench/push/driver.ts); latency is from the POST being sent to the socket receiving the message.',
      ],
    };
  } finally {
    await relay.stop();
    await service.process.stop();
  }
}
