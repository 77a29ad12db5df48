// The push scenario's side of bench/push/driver.ts: starts the driver processes, gives each
// its share of the visitors and of the rate, and merges what they measured.
import { spawn, type ChildProcess } from 'node:child_process';
import { pinLoad } from '../cpu-pinning.ts';
import { atCleanup, root } from '../processes.ts';
import type { Command, ConnectResult, RoundResult } from './driver.ts';

type Pending = { resolve(value: unknown): void; reject(error: Error): void };
type Driver = { child: ChildProcess; pending: Map<number, Pending> };
type WithoutId<T> = T extends unknown ? Omit<T, 'id'> : never;

export type MergedRound = {
  sent: number;
  errors: number;
  lost: number;
  p50: number;
  p99: number;
  /** p99 of post -> its 200 answer: how much of the p99 comes before the push. */
  answeredP99: number;
  statusCodes: Record<string, number>;
  firstError: string;
  /** CPU of the busiest driver, as a share of one core over the measured part, and the worst event-loop delay p99 among them. */
  driverCpuShare: number;
  driverLoopDelayP99: number;
};

let nextId = 0;

function startDriver(): Promise<Driver> {
  const child = spawn(process.execPath, ['bench/push/driver.ts'], { cwd: root, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  pinLoad(child.pid);
  const driver: Driver = { child, pending: new Map() };
  atCleanup(async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  child.on('exit', (code) => {
    for (const pending of driver.pending.values()) pending.reject(new Error(`push driver exited with ${code}`));
    driver.pending.clear();
  });
  return new Promise((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`push driver exited with ${code} before it was ready`)));
    child.on('message', (message: { ready?: boolean; id?: number; result?: unknown; error?: string }) => {
      if (message.ready) return resolve(driver);
      const pending = driver.pending.get(message.id!);
      if (!pending) return;
      driver.pending.delete(message.id!);
      if (message.error) pending.reject(new Error(message.error));
      else pending.resolve(message.result);
    });
  });
}

function send<T>(driver: Driver, command: WithoutId<Command>): Promise<T> {
  const id = nextId++;
  return new Promise<T>((resolve, reject) => {
    driver.pending.set(id, { resolve: resolve as (value: unknown) => void, reject });
    driver.child.send({ ...command, id });
  });
}

function percentile(sorted: number[], p: number): number {
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]! : NaN;
}

export type PushDrivers = {
  /** Connects `visitors` sockets to the server, spread over the drivers; resolves with the slowest driver's time. */
  connect(target: string, origin: string, widgets: string[], visitors: number, headers?: Record<string, string>): Promise<{ ms: number; retried: number }>;
  /** One round against the target at `messagesPerSecond` in all. */
  round(target: string, postPath: string, messagesPerSecond: number, warmUpSeconds: number, seconds: number, tag: string): Promise<MergedRound>;
  disconnect(target: string): Promise<void>;
  stop(): Promise<void>;
};

export async function startPushDrivers(count: number): Promise<PushDrivers> {
  const drivers = await Promise.all(Array.from({ length: count }, startDriver));
  return {
    async connect(target, origin, widgets, visitors, headers) {
      const results = await Promise.all(
        drivers.map((driver, index) => {
          const share = Math.floor(visitors / count) + (index < visitors % count ? 1 : 0);
          // Each driver's visitors spread over every widget, as one driver's would.
          const rotated = [...widgets.slice(index % widgets.length), ...widgets.slice(0, index % widgets.length)];
          return send<ConnectResult>(driver, { cmd: 'connect', target, origin, widgets: rotated, prefix: `${target[0]}${index}`, network: index, count: share, concurrency: 100, headers });
        }),
      );
      return { ms: Math.max(...results.map((result) => result.ms)), retried: results.reduce((sum, result) => sum + result.retried, 0) };
    },
    async round(target, postPath, messagesPerSecond, warmUpSeconds, seconds, tag) {
      const results = await Promise.all(
        drivers.map((driver) => send<RoundResult>(driver, { cmd: 'round', target, postPath, messagesPerSecond: messagesPerSecond / count, warmUpSeconds, seconds, tag })),
      );
      const latencies = results.flatMap((result) => result.latencies).sort((a, b) => a - b);
      const statusCodes: Record<string, number> = {};
      for (const result of results) for (const [code, n] of Object.entries(result.statusCodes)) statusCodes[code] = (statusCodes[code] ?? 0) + n;
      return {
        sent: results.reduce((sum, result) => sum + result.sent, 0),
        errors: results.reduce((sum, result) => sum + result.errors, 0),
        lost: results.reduce((sum, result) => sum + result.lost, 0),
        p50: percentile(latencies, 50),
        p99: percentile(latencies, 99),
        answeredP99: percentile(results.flatMap((result) => result.answered).sort((a, b) => a - b), 99),
        statusCodes,
        firstError: results.map((result) => result.firstError).find(Boolean) ?? '',
        driverCpuShare: Math.max(...results.map((result) => result.cpuMs / result.wallMs)),
        driverLoopDelayP99: Math.max(...results.map((result) => result.loopDelayP99)),
      };
    },
    async disconnect(target) {
      await Promise.all(drivers.map((driver) => send(driver, { cmd: 'disconnect', target })));
    },
    async stop() {
      for (const driver of drivers) driver.child.disconnect();
      await Promise.all(drivers.map((driver) => (driver.child.exitCode === null ? new Promise((resolve) => driver.child.once('exit', resolve)) : null)));
    },
  };
}
