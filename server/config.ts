// Every environment variable the service reads, with its default and meaning.
// docs/operating.md's configuration table lists the same variables (a test checks it).
import { z } from 'zod';
import { DEFAULT_DATA_DIR } from './data-dir-lock.ts';
import { parseRetrySchedule } from './webhooks/retry-schedule.ts';

const onOff = z.enum(['on', 'off']);
const commaList = z
  .string()
  .transform((value) => value.split(',').map((item) => item.trim()).filter(Boolean));
const retrySchedule = (value: string, ctx: z.RefinementCtx) => {
  const schedule = parseRetrySchedule(value);
  if ('error' in schedule) {
    ctx.addIssue({ code: 'custom', message: schedule.error });
    return z.NEVER;
  }
  return schedule.delays;
};
const url = z.url();
/**
 * The one outbound client speaks only HTTPS (server/outbound/), to loopback hosts too; a
 * plain http:// URL would start fine and then fail every call, so it is refused here.
 */
const httpsUrl = z.url().refine((value) => new URL(value).protocol === 'https:', 'must be an https:// URL: the service calls it only over HTTPS');

export const configSchema = z.object({
  /** The one TCP port for HTTPS, REST, tRPC and sockets. */
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  /** Bind address (0.0.0.0 in containers). */
  HOST: z.string().min(1).default('127.0.0.1'),
  /** Embedded database files, generated TLS certificate, generated secrets. */
  DATA_DIR: z.string().min(1).default(DEFAULT_DATA_DIR),
  /** External PostgreSQL; when set, nothing is embedded. */
  DATABASE_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\//, 'must be a postgres:// or postgresql:// URL')
    .optional(),
  /** Connections each process keeps to PostgreSQL at most (requests, jobs and raw SQL share them). */
  DATABASE_POOL_SIZE: z.coerce.number().int().min(2).max(500).default(10),
  /** Credentials (API keys, ID tokens) each API process holds resolved in memory at most, by their HMAC; the least recently used goes first. */
  CREDENTIAL_CACHE_ENTRIES: z.coerce.number().int().min(1).default(10_000),
  /** PEM certificate; when unset (with TLS_KEY_FILE), a self-signed one is generated into DATA_DIR. */
  TLS_CERT_FILE: z.string().min(1).optional(),
  /** PEM private key matching TLS_CERT_FILE. */
  TLS_KEY_FILE: z.string().min(1).optional(),
  /** `off` only behind a TLS-terminating proxy listed in TRUST_PROXY. */
  TLS: onOff.default('on'),
  /** Comma list of proxy addresses/CIDRs whose X-Forwarded-Proto/X-Forwarded-For are believed. */
  TRUST_PROXY: commaList.optional(),
  /** 32+ byte secret: encrypts retrievable key copies and signing secrets, signs cursors. Generated into DATA_DIR when unset. */
  SECRET_KEY: z.string().min(32, 'must be at least 32 characters').optional(),
  /** `api`, `worker` or `all`: lets API and worker processes scale separately. */
  ROLE: z.enum(['api', 'worker', 'all']).default('all'),
  /** Bearer token for `GET /metrics` (root path, Prometheus text); unset = metrics not served. */
  METRICS_TOKEN: z.string().min(1).optional(),
  /** Webhook retry delays after the first attempt. */
  WEBHOOK_RETRY_SCHEDULE: z.string().default('1m,5m,30m,2h').transform(retrySchedule),
  /** Consecutive failed deliveries (after retries) that auto-disable a URL. */
  WEBHOOK_DISABLE_AFTER: z.coerce.number().int().min(1).default(5),
  /** Days an event, its webhook deliveries and their attempts are kept (the delivery log and replay reach back this far). */
  WEBHOOK_HISTORY_DAYS: z.coerce.number().int().min(1).max(3650).default(30),
  /** Webhook delivery time-out in milliseconds. */
  WEBHOOK_TIMEOUT_MS: z.coerce.number().int().min(100).default(10_000),
  /** Host names or addresses exempt from the public-address rule of every outbound request (webhooks, messaging provider, summaries): tests, local receivers; never set in production. */
  WEBHOOK_ALLOW_HOSTS: commaList.optional(),
  /** Messaging provider base URL, https:// only (tests point it at a local fake). */
  MESSAGING_API_URL: httpsUrl.default('https://graph.facebook.com/v21.0'),
  /** Time-out of one call to the messaging provider, in milliseconds. */
  MESSAGING_TIMEOUT_MS: z.coerce.number().int().min(100).default(15_000),
  /** The messaging app's secret: verifies X-Hub-Signature-256 on provider callbacks (unset = callbacks refused). */
  MESSAGING_APP_SECRET: z.string().min(1).optional(),
  /** Answers the provider's callback verification handshake. */
  MESSAGING_VERIFY_TOKEN: z.string().min(1).optional(),
  /** Template sends per second per connected number during a broadcast. */
  BROADCAST_RATE_PER_SECOND: z.coerce.number().int().min(1).max(1000).default(80),
  /** OpenAI-compatible chat-completions endpoint for summaries (http:// or https://, on any address: a local model server too); unset = built-in extractive summarizer. */
  SUMMARY_API_URL: z.url({ protocol: /^https?$/, error: 'must be an http:// or https:// URL' }).optional(),
  /** Bearer key for SUMMARY_API_URL. */
  SUMMARY_API_KEY: z.string().min(1).optional(),
  /** Model name sent to SUMMARY_API_URL. */
  SUMMARY_MODEL: z.string().min(1).default('gpt-4o-mini'),
  /** Identity provider issuer for ID tokens; with OIDC_AUDIENCE and OIDC_JWKS_URL. Unset = ID tokens refused. */
  OIDC_ISSUER: z.string().min(1).optional(),
  /** Expected `aud` of ID tokens. */
  OIDC_AUDIENCE: z.string().min(1).optional(),
  /** Where the identity provider publishes its signing keys. */
  OIDC_JWKS_URL: url.optional(),
  /** New visitor ids (first messages) one client address may bring to one chat widget per minute; then 429. */
  WIDGET_NEW_VISITORS_PER_IP_PER_MINUTE: z.coerce.number().int().min(1).default(20),
  /** Visitor messages one client address may send to one chat widget per minute, whatever visitor ids it uses. */
  WIDGET_MESSAGES_PER_IP_PER_MINUTE: z.coerce.number().int().min(1).default(100),
  /** Messages one visitor may send to one chat widget per minute. */
  WIDGET_MESSAGES_PER_VISITOR_PER_MINUTE: z.coerce.number().int().min(1).default(20),
  /** Messages all visitors of one chat widget together may send per minute. */
  WIDGET_MESSAGES_PER_WIDGET_PER_MINUTE: z.coerce.number().int().min(1).default(600),
  /** "Talk to a person" requests (POST /chat-widget-handoff) per visitor and widget per minute. */
  WIDGET_HANDOFFS_PER_VISITOR_PER_MINUTE: z.coerce.number().int().min(1).default(10),
  /** Requests of any kind one client address may make to the chat widgets' public endpoints, pages and socket handshakes per minute. */
  WIDGET_REQUESTS_PER_IP_PER_MINUTE: z.coerce.number().int().min(1).default(600),
  /** Conversation polls (GET /chat-widget-messages) per visitor and widget per minute. */
  WIDGET_POLLS_PER_VISITOR_PER_MINUTE: z.coerce.number().int().min(1).default(120),
  /** Read receipts (POST /update-message-read-status) per visitor and widget per minute. */
  WIDGET_READS_PER_VISITOR_PER_MINUTE: z.coerce.number().int().min(1).default(60),
  /** Open chat-widget sockets per visitor, per API process. */
  WIDGET_SOCKETS_PER_VISITOR: z.coerce.number().int().min(1).default(5),
  /** Open chat-widget sockets per client address, per API process. */
  WIDGET_SOCKETS_PER_IP: z.coerce.number().int().min(1).default(50),
  /** `development` adds what failed as `details` to the chat-widget endpoints' 500 answers; any other value never does. */
  NODE_ENV: z.string().min(1).optional(),
  /** fatal, error, warn, info, debug, trace or silent. */
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
});

export type Config = z.infer<typeof configSchema>;

export class ConfigError extends Error {
  override name = 'ConfigError';
}

/** Parses the environment; the first problem becomes one line naming the variable. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const present = Object.fromEntries(
    Object.entries(env).filter(([name, value]) => name in configSchema.shape && value !== ''),
  );
  const result = configSchema.safeParse(present);
  if (!result.success) {
    const issue = result.error.issues[0];
    const variable = String(issue.path[0] ?? 'environment');
    throw new ConfigError(`invalid ${variable}: ${issue.message}`);
  }
  const config = result.data as Config;
  if (Boolean(config.TLS_CERT_FILE) !== Boolean(config.TLS_KEY_FILE)) {
    const missing = config.TLS_CERT_FILE ? 'TLS_KEY_FILE' : 'TLS_CERT_FILE';
    throw new ConfigError(`invalid ${missing}: TLS_CERT_FILE and TLS_KEY_FILE must be set together`);
  }
  if (config.TLS === 'off' && !config.TRUST_PROXY?.length) {
    throw new ConfigError('invalid TLS: off is only allowed behind a proxy listed in TRUST_PROXY');
  }
  const oidc = [config.OIDC_ISSUER, config.OIDC_AUDIENCE, config.OIDC_JWKS_URL];
  if (oidc.some(Boolean) && !oidc.every(Boolean)) {
    throw new ConfigError('invalid OIDC_ISSUER: OIDC_ISSUER, OIDC_AUDIENCE and OIDC_JWKS_URL must be set together');
  }
  return config;
}
