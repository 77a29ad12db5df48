// The test receiver itself: trusted through the run's test CA by this worker process and by
// processes it spawns (NODE_EXTRA_CA_CERTS, set in test/global-setup.ts), so deliveries to it
// pass ordinary certificate checks.
import { spawn } from 'node:child_process';
import { request } from 'node:https';
import type { TLSSocket } from 'node:tls';
import { afterEach, describe, expect, test } from 'vitest';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.ts';

let hook: WebhookReceiver | undefined;
afterEach(async () => {
  await hook?.close();
  hook = undefined;
});

function post(url: string, body: string): Promise<{ status: number; authorized: boolean }> {
  return new Promise((resolve, reject) => {
    // No `ca` option: only the default store plus NODE_EXTRA_CA_CERTS can make this verify.
    const outgoing = request(url, { method: 'POST', headers: { 'content-type': 'application/json' } }, (response) => {
      const authorized = (response.socket as TLSSocket).authorized;
      response.resume();
      response.on('end', () => resolve({ status: response.statusCode!, authorized }));
    });
    outgoing.on('error', reject);
    outgoing.end(body);
  });
}

describe('webhook receiver', () => {
  test('the test worker process was started with NODE_EXTRA_CA_CERTS and verifies the receiver certificate for localhost and 127.0.0.1', async () => {
    expect(process.env.NODE_EXTRA_CA_CERTS).toMatch(/mapi-test-ca-[^/]+\/local-ca\.pem$/);
    hook = await startWebhookReceiver();
    expect(hook.url).toBe(`https://localhost:${hook.port}/hook`);
    expect(await post(hook.url, '{"a":1}')).toEqual({ status: 200, authorized: true });
    expect(await post(`https://127.0.0.1:${hook.port}/hook`, '{"a":2}')).toEqual({ status: 200, authorized: true });
    const seen = await hook.waitFor(2);
    expect(seen.map((request) => [request.method, request.path, request.body])).toEqual([
      ['POST', '/hook', '{"a":1}'],
      ['POST', '/hook', '{"a":2}'],
    ]);
    expect(seen[0]!.receivedAt).toBeInstanceOf(Date);
  });

  test('a process a test spawns with process.env trusts the receiver too', async () => {
    hook = await startWebhookReceiver();
    const script = `const r = require('node:https').request(process.argv[1], { method: 'POST' }, (res) => { res.resume(); res.on('end', () => process.exit(res.statusCode === 200 ? 0 : 3)); }); r.on('error', (e) => { console.error(e.message); process.exit(2); }); r.end('{}');`;
    const child = spawn(process.execPath, ['-e', script, hook.url], { env: process.env, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk) => (stderr += chunk));
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    expect(hook.requests).toHaveLength(1);
  });

  test('answers follow the script: status per request index, held answers wait', async () => {
    hook = await startWebhookReceiver();
    hook.respondWith((_request, index) => ({ status: index === 0 ? 503 : 201 }));
    expect((await post(hook.url, '1')).status).toBe(503);
    expect((await post(hook.url, '2')).status).toBe(201);
  });

  test('waitFor throws, naming what it saw, when the condition is not met in time', async () => {
    hook = await startWebhookReceiver();
    await post(hook.url, '{"seen":true}');
    await expect(hook.waitFor(2, 100)).rejects.toThrow(/1 request\(s\) seen:\nPOST \/hook .*\{"seen":true\}/);
  });
});
