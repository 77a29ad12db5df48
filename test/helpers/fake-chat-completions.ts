// A local OpenAI-compatible chat-completions server for summary tests: a real
// HTTPS server on loopback (certificate from the run's test CA, as the fake
// messaging provider's) that records every request and answers from a script
// (e.g. one 500, then 200s), falling back to a fixed summary. The service reaches
// it through its outbound client, so its host must be allowed (`env`).
import type { IncomingHttpHeaders } from 'node:http';
import { createServer as createPlainServer, type RequestListener } from 'node:http';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { inject } from 'vitest';

export type RecordedRequest = { method: string; path: string; headers: IncomingHttpHeaders; body: any };
export type ScriptedAnswer = { status: number; body?: unknown };

export type FakeChatCompletions = {
  /** `https://localhost:<port>/v1` (or `http://127.0.0.1:<port>/v1` when plain), for SUMMARY_API_URL. */
  url: string;
  /** SUMMARY_API_URL and the host exemption the service needs to reach the fake. */
  env: Record<string, string>;
  requests: RecordedRequest[];
  /** Answers for the next requests, in order; afterwards the default answer. */
  script(...answers: ScriptedAnswer[]): void;
  stop(): Promise<void>;
};

export function completion(content: string): unknown {
  return {
    id: 'chatcmpl-fake',
    object: 'chat.completion',
    choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
  };
}

/**
 * `plain`: a plain-HTTP server on 127.0.0.1, as a local model server (Ollama, vLLM) is run,
 * with no host exemption: the operator's SUMMARY_API_URL needs none.
 */
export async function startFakeChatCompletions(
  defaultContent = 'The contact asked about an order; the agent answered.',
  options: { plain?: boolean } = {},
): Promise<FakeChatCompletions> {
  const requests: RecordedRequest[] = [];
  const queue: ScriptedAnswer[] = [];
  const answer: RequestListener = (request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      let body: unknown = text;
      try {
        body = JSON.parse(text);
      } catch {
        // Recorded as text.
      }
      requests.push({ method: request.method ?? '', path: request.url ?? '', headers: request.headers, body });
      const scripted = queue.shift() ?? { status: 200, body: completion(defaultContent) };
      response.writeHead(scripted.status, { 'content-type': 'application/json' });
      response.end(JSON.stringify(scripted.body ?? { error: { message: `status ${scripted.status}` } }));
    });
  };
  const tls = options.plain ? null : inject('webhookReceiverTls');
  const server = tls ? createServer({ key: tls.key, cert: tls.cert }, answer) : createPlainServer(answer);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const url = tls ? `https://localhost:${port}/v1` : `http://127.0.0.1:${port}/v1`;
  return {
    url,
    env: tls ? { SUMMARY_API_URL: url, WEBHOOK_ALLOW_HOSTS: 'localhost' } : { SUMMARY_API_URL: url },
    requests,
    script(...answers) {
      queue.push(...answers);
    },
    stop: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}
