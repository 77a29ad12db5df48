// `npm start`: the composition root. It is the one module in server/ that
// imports routers/ and workers/, to hand them to the service it starts.
import { appRouter } from '../routers/index.ts';
import { workerDefinition } from '../workers/index.ts';
import { ConfigError, loadConfig } from './config.ts';
import { createLogger } from './log.ts';
import { applyMemorySettings } from './memory-settings.ts';
import { startService, StartError, type RunningService } from './start-service.ts';

async function main() {
  let config;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`cannot start: ${error.message}\n`);
      process.exit(1);
    }
    throw error;
  }
  applyMemorySettings(config.ROLE);
  const log = createLogger(config.LOG_LEVEL);

  // Signals are taken before anything starts: one arriving during start-up (or right after
  // the start line) would otherwise kill the process and leave the database running.
  let running: RunningService | undefined;
  let stopSignal: string | undefined;
  const requestStop = (signal: string) => {
    if (stopSignal) return;
    stopSignal = signal;
    if (running) void shutdown(running, signal);
  };
  process.on('SIGINT', () => requestStop('SIGINT'));
  process.on('SIGTERM', () => requestStop('SIGTERM'));
  // A lost terminal must not take the database down uncleanly.
  process.on('SIGHUP', () => {});

  const shutdown = async (service: RunningService, signal: string) => {
    log.info({ signal }, 'shutting down');
    const forced = setTimeout(() => {
      log.error('shutdown took too long; exiting');
      process.exit(1);
    }, 30_000);
    forced.unref();
    try {
      await service.stop();
      process.exit(0);
    } catch (error) {
      log.error({ err: error }, 'shutdown failed');
      process.exit(1);
    }
  };

  try {
    running = await startService(config, log, { router: appRouter, worker: workerDefinition });
  } catch (error) {
    const reason = error instanceof StartError ? error.message : `${(error as Error).message ?? error}`;
    log.debug({ err: error }, 'start failed');
    process.stderr.write(`cannot start: ${reason.split('\n')[0]}\n`);
    process.exit(1);
  }

  if (stopSignal) return shutdown(running, stopSignal);
  const role = config.ROLE === 'all' ? 'API and worker' : config.ROLE === 'api' ? 'API' : 'worker';
  if (running.baseUrl) {
    process.stdout.write(`Messaging API (${role}) listening on ${running.baseUrl}\n`);
  } else {
    process.stdout.write(`Messaging API worker running\n`);
  }
}

await main();
