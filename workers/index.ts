// Every background task and the crontab, handed to the Graphile Worker runner.
import type { WorkerDefinition } from '../server/worker.ts';

export const workerDefinition: WorkerDefinition = {
  taskList: {},
  crontab: '',
};
