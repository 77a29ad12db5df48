// Starts the real service for a test file: its own cloned database, a real
// HTTPS port on loopback, the real worker; and a small HTTPS client for it.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import pino from 'pino';
import { Agent, fetch } from 'undici';
import { appRouter } from '../../routers/index.ts';
import { workerDefinition } from '../../workers/index.ts';
import { createAccount } from '../../server/accounts/create-account.ts';
import { createScopedKey, type ScopedKeyCreateInput } from '../../server/api-keys/create-scoped-key.ts';
import { loadConfig } from '../../server/config.ts';
import { createLogger, requestIdMixin } from '../../server/log.ts';
import { startService, type ServiceDefinition } from '../../server/start-service.ts';
import type { Services } from '../../server/process-services.ts';
import { createTestDatabase } from './database.ts';
import { createConformanceChecker, type ConformanceChecker } from './openapi-conformance.ts';

export const TEST_SECRET_KEY = 'test-secret-key-that-is-at-least-32-bytes-long';

/** Accepts the generated self-signed certificate. */
export const insecureAgent = new Agent({ connect: { rejectUnauthorized: false } });

export type ApiResponse = {
  status: number;
  headers: Headers;
  contentType: string;
  text: string;
  /** The parsed JSON body (undefined when the body is not JSON). */
  body: any;
};

export type RequestOptions = {
  query?: Record<string, string | number | boolean | undefined>;
  body?: unknown;
  /** A raw body sent as is (with its own content type header, if any). */
  rawBody?: string;
  headers?: Record<string, string>;
  apiKey?: string;
  /** Skip the check against the OpenAPI document (for answers no operation owns, such as a wrong method). */
  unchecked?: boolean;
};

export type TestService = {
  services: Services;
  baseUrl: string;
  origin: string;
  port: number;
  databaseUrl: string;
  request(method: string, pathname: string, options?: RequestOptions): Promise<ApiResponse>;
  createAccount(options?: { email?: string; plan?: 'pro' | 'free'; agency?: boolean; credits?: number; webhooks?: boolean }): Promise<{ userId: string; apiKey: string }>;
  /** A scoped key of the account, made by the same code as POST /api-keys; returns the key value. */
  createScopedKey(accountId: string, scopes: NonNullable<ScopedKeyCreateInput['scopes']>): Promise<string>;
  stop(): Promise<void>;
};

let accountCounter = 0;

export async function startTestService(options: {
  env?: Record<string, string>;
  definition?: Partial<ServiceDefinition>;
  /** Reuse an existing database (a second process on the same database). */
  databaseUrl?: string;
  /** Collects the service's log lines (JSON, info and up) instead of discarding them. */
  logLines?: string[];
} = {}): Promise<TestService> {
  const database = options.databaseUrl ? null : await createTestDatabase();
  const databaseUrl = options.databaseUrl ?? database!.url;
  const dataDir = await mkdtemp(path.join(tmpdir(), 'mapi-svc-'));
  const config = loadConfig({
    PORT: '0',
    HOST: '127.0.0.1',
    DATA_DIR: dataDir,
    DATABASE_URL: databaseUrl,
    SECRET_KEY: TEST_SECRET_KEY,
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    ...options.env,
  });
  const lines = options.logLines;
  const sink = lines && new Writable({ write: (chunk, _encoding, done) => (lines.push(String(chunk)), done()) });
  const log = sink ? pino({ level: 'info', mixin: requestIdMixin }, sink) : createLogger(config.LOG_LEVEL);
  let running: Awaited<ReturnType<typeof startService>>;
  try {
    running = await startService(config, log, {
      router: appRouter,
      worker: workerDefinition,
      ...options.definition,
    });
  } catch (error) {
    // A refused start (the point of some tests) leaves nothing behind either.
    await database?.drop();
    await rm(dataDir, { recursive: true, force: true });
    throw error;
  }
  const baseUrl = running.baseUrl!;
  const origin = new URL(baseUrl).origin;

  // Every /v1 answer a test sees is checked against the document the service serves.
  let checker: Promise<ConformanceChecker> | undefined;
  const conformance = () =>
    (checker ??= fetch(`${origin}/v1/openapi.json`, { dispatcher: insecureAgent })
      .then((response) => response.json())
      .then((document) => createConformanceChecker(document as Record<string, unknown>)));

  async function request(method: string, pathname: string, requestOptions: RequestOptions = {}): Promise<ApiResponse> {
    const url = new URL(pathname.startsWith('/v1') || pathname.startsWith('/trpc') ? origin + pathname : baseUrl + pathname);
    const query = { ...requestOptions.query };
    if (requestOptions.apiKey !== undefined) query.apiKey = requestOptions.apiKey;
    for (const [key, value] of Object.entries(query)) if (value !== undefined) url.searchParams.set(key, String(value));
    const headers: Record<string, string> = { ...requestOptions.headers };
    let body: string | undefined = requestOptions.rawBody;
    if (requestOptions.body !== undefined) {
      body = JSON.stringify(requestOptions.body);
      headers['content-type'] ??= 'application/json';
    }
    const response = await fetch(url, { method, headers, body, dispatcher: insecureAgent });
    const text = await response.text();
    const contentType = response.headers.get('content-type') ?? '';
    let parsed: unknown;
    if (contentType.includes('json')) {
      try {
        parsed = JSON.parse(text);
      } catch {
        parsed = undefined;
      }
    }
    if (!requestOptions.unchecked) {
      (await conformance()).check({ method, pathname: url.pathname, status: response.status, contentType, text, headers: response.headers as unknown as Headers });
    }
    return { status: response.status, headers: response.headers as unknown as Headers, contentType, text, body: parsed };
  }

  return {
    services: running.services,
    baseUrl,
    origin,
    port: running.port!,
    databaseUrl,
    request,
    async createAccount(accountOptions = {}) {
      accountCounter += 1;
      const created = await createAccount(running.services.orm.em.fork(), running.services.secrets, {
        email: accountOptions.email ?? `account${accountCounter}-${process.pid}-${Date.now()}@example.com`,
        plan: accountOptions.plan,
        agency: accountOptions.agency,
        credits: accountOptions.credits,
        webhooks: accountOptions.webhooks,
      });
      return { userId: created.userId, apiKey: created.apiKey };
    },
    async createScopedKey(accountId, scopes) {
      const created = await createScopedKey(running.services.orm.em.fork(), running.services.secrets, accountId, { scopes });
      return created.apiKey;
    },
    async stop() {
      await running.stop();
      await database?.drop();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}
