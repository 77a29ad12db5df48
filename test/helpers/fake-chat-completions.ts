// A local OpenAI-compatible chat-completions server for summary tests: a real
// HTTPS server on loopback (certificate from the run's test CA, as the fake
// messaging provider's) that records every request and answers from a script
// (e.g. one 500, then 200s), falling back to a fixed summary. The service reaches
// it through its outbound client, so its host must be allowed (`env`).
import type { IncomingHttpHeaders } from 'node:http';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { inject } from 'vitest';

export type RecordedRequest = { method: string; path: string; headers: IncomingHttpHeaders; body: any };
export type ScriptedAnswer = { status: number; body?: unknown };

export type FakeChatCompletions = {
  /** `https://localhost:<port>/v1`, for SUMMARY_API_URL. */
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

export async function startFakeChatCompletions(defaultContent = 'The contact asked about an order; the agent answered.'): Promise<FakeChatCompletions> {
  const requests: RecordedRequest[] = [];
  const queue: ScriptedAnswer[] = [];
  const tls = inject('webhookReceiverTls');
  const server = createServer({ key: tls.key, cert: tls.cert }, (request, response) => {
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
      const answer = queue.shift() ?? { status: 200, body: completion(defaultContent) };
      response.writeHead(answer.status, { 'content-type': 'application/json' });
      response.end(JSON.stringify(answer.body ?? { error: { message: `status ${answer.status}` } }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const url = `https://localhost:${port}/v1`;
  return {
    url,
    env: { SUMMARY_API_URL: url, WEBHOOK_ALLOW_HOSTS: 'localhost' },
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
