// Starting and stopping the whole service: database (embedded or external),
// migrations, secrets, the HTTPS host and the job worker, as ROLE asks.
import { mkdir } from 'node:fs/promises';
import type { AnyRouter } from '@trpc/server';
import type { FastifyInstance } from 'fastify';
import { Logger as JobQueueLogger, runMigrations } from 'graphile-worker';
import type { Logger } from 'pino';
import type { Config } from './config.ts';
import { DataDirLockedError, lockDataDir } from './data-dir-lock.ts';
import { startEmbeddedPostgres } from './db/embedded.ts';
import { migrate, openOrm, pgPool, UnsupportedPostgresError } from './db/orm.ts';
import { attachUpgrades, buildHttpHost, type HostOptions, type UpgradeHandler } from './http/host.ts';
import { PROVIDER_CALLBACK_ROUTES, registerProviderCallbacks } from './http/provider-callbacks.ts';
import { READY_ROUTE, registerReadiness } from './http/readiness.ts';
import { registerInboxPage } from './http/inbox-page.ts';
import { registerDemoSite } from './http/demo-site.ts';
import { registerWidgetPages, WIDGET_PAGE_ROUTES } from './http/widget-pages.ts';
import { registerMetrics } from './metrics/metrics-route.ts';
import { loadTlsMaterial } from './http/tls.ts';
import { createMessagingProvider } from './messaging/provider-client.ts';
import { createCredentialChangeFeed, hearCredentialChanges } from './auth/credential-changes.ts';
import { CredentialCache } from './auth/credential-cache.ts';
import { createConversationEventFeed } from './realtime/conversation-event-feed.ts';
import { createWidgetGateway } from './http/widget-gateway.ts';
import { createUnauthenticatedSockets } from './http/unauthenticated-sockets.ts';
import { createWidgetChangeFeed, WIDGET_CHANGES_CHANNEL } from './widgets/widget-changes.ts';
import { assertSameSecretAsDatabase, SecretMismatchError } from './secret-check.ts';
import { loadMasterSecret } from './master-secret.ts';
import { createSecrets } from './secrets.ts';
import type { Services } from './process-services.ts';
import { startWorker, type WorkerDefinition } from './worker.ts';

export type ServiceDefinition = {
  router: AnyRouter;
  /** Tasks and crontab, built with the services they use. */
  worker: (services: Services) => WorkerDefinition;
  /** Plain routes and socket handlers that sit beside the procedures. */
  plugins?: HostOptions['plugins'];
  plainRoutes?: HostOptions['plainRoutes'];
  upgrades?: (services: Services, app: FastifyInstance) => { handler: UpgradeHandler; close(): Promise<void> }[];
  /** Tests shorten it; the service gives a new socket UNAUTHENTICATED_SOCKET_DEADLINE_MS to authenticate. */
  unauthenticatedSocketDeadlineMs?: number;
};

export type RunningService = {
  services: Services;
  /** `https://host:port/v1`, or null for ROLE=worker. */
  baseUrl: string | null;
  port: number | null;
  stop(): Promise<void>;
};

/** The base URL the service prints for its bind address and port. */
export function serviceBaseUrl(bindHost: string, port: number): string {
  const host = bindHost === '0.0.0.0' || bindHost === '::' ? 'localhost' : bindHost;
  return `https://${host.includes(':') ? `[${host}]` : host}:${port}/v1`;
}

export class StartError extends Error {
  override name = 'StartError';
}

/**
 * The database: DATABASE_URL, or the embedded cluster under DATA_DIR. The service adopts a
 * cluster left running on DATA_DIR (it holds the lock, so no other service uses it); the
 * admin CLI borrows a running one and leaves it to its owner.
 */
export async function openDatabase(config: Config, log: Logger, use: 'service' | 'command' = 'command') {
  if (config.DATABASE_URL) return { url: config.DATABASE_URL, stop: async () => {} };
  await mkdir(config.DATA_DIR, { recursive: true });
  const postgresLog = log.child({ component: 'postgres' });
  return startEmbeddedPostgres({
    dataDir: config.DATA_DIR,
    log: (line) => postgresLog.debug(line),
    notice: (line) => postgresLog.info(line),
    adoptRunning: use === 'service',
  });
}

/** Graphile Worker's migration messages are not worth a line of ours. */
const jobQueueMigrationLogger = new JobQueueLogger(() => () => {});

/** Builds the shared services on an open database (used by the service and the admin CLI). */
export async function createServices(config: Config, log: Logger, databaseUrl: string): Promise<Services> {
  const orm = await openOrm(databaseUrl, config.DATABASE_POOL_SIZE);
  const pool = pgPool(orm);
  try {
    await migrate(orm);
    // The job queue's schema too, in every role: an API process enqueues jobs (in the
    // transaction of a request) even when no worker has ever run on this database.
    // Through the ORM's pool: a pool of its own would be ended without waiting for its
    // sockets to close, and a session the database then terminates would raise an error
    // nobody listens for (the admin CLI stops its database right after a quick command).
    await runMigrations({ pgPool: pool, logger: jobQueueMigrationLogger });
  } catch (error) {
    await orm.close();
    throw error;
  }
  const secrets = createSecrets(await loadMasterSecret(config.SECRET_KEY, config.DATA_DIR));
  try {
    await assertSameSecretAsDatabase(orm.em.fork(), secrets);
  } catch (error) {
    await orm.close();
    throw error;
  }
  const messaging = createMessagingProvider({
    baseUrl: config.MESSAGING_API_URL,
    timeoutMs: config.MESSAGING_TIMEOUT_MS,
    allowHosts: config.WEBHOOK_ALLOW_HOSTS ?? [],
  });
  const credentialChanges = createCredentialChangeFeed(log);
  const credentialCache = new CredentialCache(config.CREDENTIAL_CACHE_ENTRIES);
  const widgetChanges = createWidgetChangeFeed(log);
  const conversationEvents = createConversationEventFeed({
    databaseUrl,
    pool,
    log,
    alsoHear: [
      hearCredentialChanges(credentialChanges, credentialCache),
      { channel: WIDGET_CHANGES_CHANNEL, receive: widgetChanges.receive, reconnected: widgetChanges.reconnected },
    ],
  });
  return { config, databaseUrl, orm, pool, secrets, log, messaging, conversationEvents, credentialChanges, credentialCache, widgetChanges };
}

export async function startService(config: Config, log: Logger, definition: ServiceDefinition): Promise<RunningService> {
  // Also with DATABASE_URL: DATA_DIR still holds the generated certificate and secret key,
  // which two processes generating them at once would each write differently. Processes
  // scaled out (ROLE=api, ROLE=worker) each get their own DATA_DIR and a shared SECRET_KEY.
  let lock;
  try {
    lock = await lockDataDir(config.DATA_DIR);
  } catch (error) {
    if (error instanceof DataDirLockedError) throw new StartError(error.message, { cause: error });
    throw error;
  }
  let database: Awaited<ReturnType<typeof openDatabase>>;
  try {
    database = await openDatabase(config, log, 'service');
  } catch (error) {
    await lock.release();
    throw error;
  }
  let services: Services;
  try {
    services = await createServices(config, log, database.url);
  } catch (error) {
    await database.stop();
    await lock.release();
    if (error instanceof SecretMismatchError || error instanceof UnsupportedPostgresError) throw new StartError(error.message, { cause: error });
    throw new StartError(`database unreachable or not migratable: ${(error as Error).message}`, { cause: error });
  }

  let app: FastifyInstance | null = null;
  let upgradeClosers: (() => Promise<void>)[] = [];
  let worker: Awaited<ReturnType<typeof startWorker>> | null = null;
  let baseUrl: string | null = null;
  let port: number | null = null;

  const stop = async () => {
    // Stop accepting and finish in-flight requests, then the worker, then the database.
    if (app) {
      for (const close of upgradeClosers) await close().catch(() => {});
      await app.close();
    }
    await services.conversationEvents.stop();
    if (worker) await worker.stop();
    await services.messaging.close();
    await services.orm.close();
    await database.stop();
    await lock.release();
  };

  try {
    if (config.ROLE !== 'worker') {
      // Live pushes reach this process's sockets from whichever process stored the change.
      await services.conversationEvents.start();
      const tls = config.TLS === 'on' ? await loadTlsMaterial(config) : null;
      // One count of unauthenticated sockets per address for /trpc and Socket.IO together.
      const unauthenticated = createUnauthenticatedSockets({ deadlineMs: definition.unauthenticatedSocketDeadlineMs });
      const widgetGateway = createWidgetGateway(services, unauthenticated);
      upgradeClosers = [() => widgetGateway.close()];
      app = await buildHttpHost({
        services,
        router: definition.router,
        tls,
        plugins: [
          (host) =>
            registerReadiness(host, {
              databaseUrl: services.databaseUrl,
              workerRunning: config.ROLE === 'api' ? null : () => worker?.running() ?? false,
            }),
          (host) => registerProviderCallbacks(host, services),
          (host) => registerWidgetPages(host, services),
          (host) => registerInboxPage(host),
          (host) => registerDemoSite(host, services),
          (host) => widgetGateway.register(host),
          (host) => registerMetrics(host, config.METRICS_TOKEN, { pool: services.pool, connectedSockets: () => widgetGateway.connectedSockets() }),
          ...(definition.plugins ?? []),
        ],
        plainRoutes: [READY_ROUTE, ...PROVIDER_CALLBACK_ROUTES, ...WIDGET_PAGE_ROUTES, ...(definition.plainRoutes ?? [])],
      });
      await app.ready();
      const extra = definition.upgrades?.(services, app) ?? [];
      const trpcSockets = attachUpgrades(app, services, definition.router, unauthenticated, [widgetGateway.handleUpgrade, ...extra.map((item) => item.handler)]);
      upgradeClosers = [() => widgetGateway.close(), ...extra.map((item) => () => item.close()), () => trpcSockets.close()];
      try {
        // fastify names the scheme from its own https option, which the one-port server factory
        // does not set; clients speak TLS to this port (or to the proxy in front of it).
        await app.listen({
          port: config.PORT,
          host: config.HOST,
          listenTextResolver: (address) => `Server listening at ${address.replace(/^http:/, 'https:')}`,
        });
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        if (code === 'EADDRINUSE') throw new StartError(`port ${config.PORT} is already in use on ${config.HOST}`);
        if (code === 'EADDRNOTAVAIL') throw new StartError(`cannot bind to HOST ${config.HOST}`);
        throw error;
      }
      const address = app.server.address();
      port = typeof address === 'object' && address ? address.port : config.PORT;
      baseUrl = serviceBaseUrl(config.HOST, port);
    }
    if (config.ROLE !== 'api') worker = await startWorker(services, definition.worker(services));
  } catch (error) {
    await stop().catch(() => {});
    throw error;
  }

  return { services, baseUrl, port, stop };
}
