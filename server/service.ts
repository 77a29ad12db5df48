// Starting and stopping the whole service: database (embedded or external),
// migrations, secrets, the HTTPS host and the job worker, as ROLE asks.
import { mkdir } from 'node:fs/promises';
import type { AnyRouter } from '@trpc/server';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { Config } from './config.ts';
import { startEmbeddedPostgres } from './db/embedded.ts';
import { migrate, openOrm, pgPool } from './db/orm.ts';
import { attachUpgrades, buildHttpHost, type HostOptions, type UpgradeHandler } from './http/host.ts';
import { loadTlsMaterial } from './http/tls.ts';
import { assertSameSecretAsDatabase, SecretMismatchError } from './secret-check.ts';
import { createSecrets, loadMasterSecret } from './secrets.ts';
import type { Services } from './services.ts';
import { startWorker, type WorkerDefinition } from './worker.ts';

export type ServiceDefinition = {
  router: AnyRouter;
  /** Tasks and crontab, built with the services they use. */
  worker: (services: Services) => WorkerDefinition;
  /** Plain routes and socket handlers that sit beside the procedures. */
  plugins?: HostOptions['plugins'];
  plainRoutes?: HostOptions['plainRoutes'];
  upgrades?: (services: Services, app: FastifyInstance) => { handler: UpgradeHandler; close(): Promise<void> }[];
};

export type RunningService = {
  services: Services;
  /** `https://host:port/v1`, or null for ROLE=worker. */
  baseUrl: string | null;
  port: number | null;
  stop(): Promise<void>;
};

export class StartError extends Error {
  override name = 'StartError';
}

export async function openDatabase(config: Config, log: Logger) {
  if (config.DATABASE_URL) return { url: config.DATABASE_URL, stop: async () => {} };
  await mkdir(config.DATA_DIR, { recursive: true });
  return startEmbeddedPostgres({ dataDir: config.DATA_DIR, log: (line) => log.debug({ component: 'postgres' }, line) });
}

/** Builds the shared services on an open database (used by the service and the admin CLI). */
export async function createServices(config: Config, log: Logger, databaseUrl: string): Promise<Services> {
  const orm = await openOrm(databaseUrl);
  try {
    await migrate(orm);
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
  return { config, databaseUrl, orm, pool: pgPool(orm), secrets, log };
}

export async function startService(config: Config, log: Logger, definition: ServiceDefinition): Promise<RunningService> {
  const database = await openDatabase(config, log);
  let services: Services;
  try {
    services = await createServices(config, log, database.url);
  } catch (error) {
    await database.stop();
    if (error instanceof SecretMismatchError) throw new StartError(error.message, { cause: error });
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
    if (worker) await worker.stop();
    await services.orm.close();
    await database.stop();
  };

  try {
    if (config.ROLE !== 'worker') {
      const tls = config.TLS === 'on' ? await loadTlsMaterial(config) : null;
      app = await buildHttpHost({
        services,
        router: definition.router,
        tls,
        plugins: definition.plugins,
        plainRoutes: definition.plainRoutes,
      });
      await app.ready();
      const extra = definition.upgrades?.(services, app) ?? [];
      const trpcSockets = attachUpgrades(app, services, definition.router, extra.map((item) => item.handler));
      upgradeClosers = [...extra.map((item) => () => item.close()), () => trpcSockets.close()];
      try {
        await app.listen({ port: config.PORT, host: config.HOST });
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        if (code === 'EADDRINUSE') throw new StartError(`port ${config.PORT} is already in use on ${config.HOST}`);
        if (code === 'EADDRNOTAVAIL') throw new StartError(`cannot bind to HOST ${config.HOST}`);
        throw error;
      }
      const address = app.server.address();
      port = typeof address === 'object' && address ? address.port : config.PORT;
      const host = config.HOST === '0.0.0.0' || config.HOST === '::' ? 'localhost' : config.HOST;
      baseUrl = `https://${host.includes(':') ? `[${host}]` : host}:${port}/v1`;
    }
    if (config.ROLE !== 'api') worker = await startWorker(services, definition.worker(services));
  } catch (error) {
    await stop().catch(() => {});
    throw error;
  }

  return { services, baseUrl, port, stop };
}
