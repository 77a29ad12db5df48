// Every background task and the crontab, handed to the Graphile Worker runner.
// Each task lives in its own file and receives the process's services.
import type { Services } from '../server/services.ts';
import type { WorkerDefinition } from '../server/worker.ts';

export function workerDefinition(_services: Services): WorkerDefinition {
  return {
    taskList: {},
    crontab: '',
  };
}
