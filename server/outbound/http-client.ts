// The one way the service makes outbound HTTP requests: HTTPS only, to public
// addresses checked at connect time (save the one origin an operator configured), with a time-out, pooled connections per origin
// and bounded concurrency, never following redirects, never throwing for a failed
// delivery (it reports how it failed instead).
import { performance } from 'node:perf_hooks';
import { Agent, request, errors as undiciErrors } from 'undici';
import { BlockedAddressError, createGuardedLookup, refuseUrlWithoutLookup } from './address-guard.ts';

export type OutboundFailureType = 'permanent' | 'temporary' | 'timeout' | 'network' | 'unknown';

export type OutboundResult = {
  delivered: boolean;
  statusCode: number | null;
  durationMs: number;
  failure: null | { type: OutboundFailureType; message: string };
};

export type OutboundClientOptions = {
  /** Whole request: connect, send, response headers and the (capped) body. */
  timeoutMs: number;
  /** Host names or addresses exempt from the public-address rule (WEBHOOK_ALLOW_HOSTS). */
  allowHosts: readonly string[];
  /**
   * The one origin the operator configured for this client (SUMMARY_API_URL), exempt from the
   * HTTPS and public-address rules: a model server on loopback or the private network is the
   * operator's choice, not a tenant's URL. Every other origin stays guarded.
   */
  operatorOrigin?: string;
  /** Requests in flight to one origin; also its connection pool size. Below maxConcurrent. */
  maxConcurrentPerOrigin?: number;
  /** Requests in flight overall. */
  maxConcurrent?: number;
};

/** An outbound result with the answer's body, for callers that read it (the messaging provider). */
export type OutboundResponse = OutboundResult & { body: string | null };

type RequestInit = { method: string; headers: Record<string, string>; body?: string; signal?: AbortSignal };

export type OutboundClient = {
  post(url: string, init: { headers: Record<string, string>; body: string }): Promise<OutboundResult>;
  /**
   * Any method; returns the answer's body (up to 1 MiB, as UTF-8), null when there was no answer or it was larger.
   * `signal` abandons the request early (a job's own, when its worker shuts down).
   */
  request(url: string, init: RequestInit): Promise<OutboundResponse>;
  /** Waits for requests in flight, then closes every pooled connection. */
  close(): Promise<void>;
};

const DEFAULT_MAX_CONCURRENT_PER_ORIGIN = 8;
const DEFAULT_MAX_CONCURRENT = 64;
/** Receivers' answers are not used; read a little so the connection can be reused, then drop it. */
const RESPONSE_BODY_LIMIT = 16 * 1024;
/** Answers that are read (provider JSON, template listings) stay well under this. */
const READ_BODY_LIMIT = 1024 * 1024;

/** The hosts whose every address the connect-time lookup accepts: the allowed ones, and the operator's. */
function guardExemptions(options: OutboundClientOptions): readonly string[] {
  if (!options.operatorOrigin) return options.allowHosts;
  const host = new URL(options.operatorOrigin).hostname;
  return [...options.allowHosts, host.startsWith('[') ? host.slice(1, -1) : host];
}

export function createOutboundClient(options: OutboundClientOptions): OutboundClient {
  const maxConcurrent = options.maxConcurrent ?? DEFAULT_MAX_CONCURRENT;
  // A slow origin may hold at most its own share of the overall slots.
  const maxPerOrigin = Math.max(1, Math.min(options.maxConcurrentPerOrigin ?? DEFAULT_MAX_CONCURRENT_PER_ORIGIN, maxConcurrent - 1));
  const agent = new Agent({
    connections: maxPerOrigin,
    // HTTP/1.1 only, so `connections` bounds both sockets and requests in flight per origin.
    allowH2: false,
    connect: { lookup: createGuardedLookup(guardExemptions(options)), timeout: options.timeoutMs },
  });
  const overall = new Semaphore(maxConcurrent);
  const perOrigin = new Map<string, Semaphore>();
  const inFlight = new Set<Promise<OutboundResponse>>();

  async function send(
    url: string,
    init: RequestInit,
    readBody: boolean,
  ): Promise<OutboundResponse> {
    const started = performance.now();
    const result = (statusCode: number | null, failure: OutboundResult['failure'], body: string | null = null): OutboundResponse => ({
      delivered: failure === null,
      statusCode,
      durationMs: Math.round(performance.now() - started),
      failure,
      body,
    });

    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      return result(null, { type: 'permanent', message: 'url must be a valid absolute URL' });
    }
    // Literal addresses never reach the connect-time lookup, so they are checked here.
    const refusal = parsed.origin === options.operatorOrigin ? null : refuseUrlWithoutLookup(parsed, options.allowHosts);
    if (refusal) return result(null, { type: parsed.protocol === 'https:' ? 'network' : 'permanent', message: refusal });

    // Per origin first: requests queued behind a slow origin do not take overall slots.
    const originSlots = perOrigin.get(parsed.origin) ?? new Semaphore(maxPerOrigin);
    perOrigin.set(parsed.origin, originSlots);
    await originSlots.acquire();
    try {
      await overall.acquire();
      try {
        const controller = new AbortController();
        let timedOut = false;
        const timer = setTimeout(() => {
          timedOut = true;
          controller.abort(new Error(`no answer within ${options.timeoutMs} ms`));
        }, options.timeoutMs);
        const abandon = () => controller.abort(init.signal?.reason);
        if (init.signal?.aborted) abandon();
        init.signal?.addEventListener('abort', abandon, { once: true });
        try {
          const response = await request(parsed, {
            method: init.method as 'POST',
            headers: init.headers,
            body: init.body,
            dispatcher: agent,
            signal: controller.signal,
          });
          let body: string | null = null;
          if (readBody) body = await readCapped(response.body, READ_BODY_LIMIT);
          else await response.body.dump({ limit: RESPONSE_BODY_LIMIT, signal: controller.signal }).catch(() => undefined);
          // undici returns a kept-alive socket to its pool one event-loop turn after the
          // response ends; waiting for that lets the caller's next post reuse the connection.
          await new Promise((resolve) => setImmediate(resolve));
          return result(response.statusCode, classifyStatus(response.statusCode), body);
        } catch (error) {
          if (timedOut) return result(null, { type: 'timeout', message: `no answer within ${options.timeoutMs} ms` });
          return result(null, classifyError(error));
        } finally {
          clearTimeout(timer);
          init.signal?.removeEventListener('abort', abandon);
        }
      } finally {
        overall.release();
      }
    } finally {
      originSlots.release();
      if (originSlots.idle) perOrigin.delete(parsed.origin);
    }
  }

  function track(pending: Promise<OutboundResponse>): Promise<OutboundResponse> {
    const settled = pending.catch(
      (error: unknown): OutboundResponse => ({
        delivered: false,
        statusCode: null,
        durationMs: 0,
        failure: { type: 'unknown', message: errorMessage(error) },
        body: null,
      }),
    );
    inFlight.add(settled);
    void settled.finally(() => inFlight.delete(settled));
    return settled;
  }

  return {
    async post(url, init) {
      const { body: _unread, ...outcome } = await track(send(url, { method: 'POST', ...init }, false));
      return outcome;
    },
    request(url, init) {
      return track(send(url, init, true));
    },
    async close() {
      await Promise.allSettled([...inFlight]);
      await agent.close();
    },
  };
}

/** Reads a body up to `limit` bytes; a larger one is abandoned (null) rather than buffered. */
async function readCapped(body: AsyncIterable<Buffer> & { destroy(): unknown }, limit: number): Promise<string | null> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.length;
    if (size > limit) {
      body.destroy();
      return null;
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function classifyStatus(status: number): OutboundResult['failure'] {
  if (status >= 200 && status < 300) return null;
  // Redirects are never followed: the subscription's URL is the one that was checked.
  if (status >= 300 && status < 400) return { type: 'permanent', message: `redirect (${status}) not followed` };
  if (status >= 400 && status < 500) return { type: 'permanent', message: `receiver answered ${status}` };
  if (status >= 500 && status < 600) return { type: 'temporary', message: `receiver answered ${status}` };
  return { type: 'unknown', message: `receiver answered ${status}` };
}

function classifyError(error: unknown): NonNullable<OutboundResult['failure']> {
  const message = errorMessage(error);
  if (error instanceof undiciErrors.ConnectTimeoutError || error instanceof undiciErrors.HeadersTimeoutError || error instanceof undiciErrors.BodyTimeoutError) {
    return { type: 'timeout', message };
  }
  if (findCause(error, (cause) => cause instanceof BlockedAddressError)) return { type: 'network', message };
  const code = findCause(error, (cause) => typeof (cause as { code?: unknown }).code === 'string') as { code?: string } | undefined;
  // Connection refused/reset, DNS, TLS, socket closed: the receiver could not be reached.
  if (code || error instanceof undiciErrors.SocketError) return { type: 'network', message };
  return { type: 'unknown', message };
}

function findCause(error: unknown, test: (cause: object) => boolean): object | undefined {
  for (let current = error, depth = 0; current && typeof current === 'object' && depth < 5; current = (current as { cause?: unknown }).cause, depth++) {
    if (test(current)) return current;
  }
  return undefined;
}

function errorMessage(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = error.cause instanceof Error && error.cause.message !== error.message ? `: ${error.cause.message}` : '';
  return `${error.message}${cause}`;
}

/** Counts slots; waiters are served in arrival order. */
class Semaphore {
  #free: number;
  #waiting: Array<() => void> = [];
  #capacity: number;

  constructor(capacity: number) {
    this.#capacity = capacity;
    this.#free = capacity;
  }

  get idle(): boolean {
    return this.#free === this.#capacity && this.#waiting.length === 0;
  }

  acquire(): Promise<void> {
    if (this.#free > 0) {
      this.#free--;
      return Promise.resolve();
    }
    return new Promise((resolve) => this.#waiting.push(resolve));
  }

  release(): void {
    const next = this.#waiting.shift();
    if (next) next();
    else this.#free++;
  }
}
