// A sender with nothing left to send goes quiet: the wake-up a round commits (for the moment
// it would be over, in case its worker dies mid-round) is added only when some delivery is
// due, so the round that wake-up runs, finding nothing, leaves no wake-up of its own behind.
import { afterAll, beforeAll, expect, test } from 'vitest';
import { startTestService, type TestService } from '../helpers/service.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.ts';
import { createTask, deliveriesOf, eventually, subscribe, WEBHOOK_ENV } from './webhook-fixtures.ts';

let service: TestService;
let receiver: WebhookReceiver;

beforeAll(async () => {
  // A short attempt time-out keeps a round's limit, and so its wake-up, a few seconds ahead.
  service = await startTestService({ env: { ...WEBHOOK_ENV, WEBHOOK_TIMEOUT_MS: '200' } });
  // The first attempt (dispatch's) fails, so the retry is the sender's round.
  receiver = await startWebhookReceiver({ respondWith: (_request, index) => ({ status: index === 0 ? 500 : 200 }) });
});

afterAll(async () => {
  await receiver?.close();
  await service?.stop();
});

/** The sender's round wake-ups still queued (keyed per second; the minute's sweep is not one). */
async function roundWakeUps(): Promise<number> {
  const { rows } = await service.services.pool.query<{ n: number }>(
    `select count(*)::int as n from graphile_worker._private_jobs where key like 'send-webhook-deliveries@%'`,
  );
  return rows[0]!.n;
}

test('after its last delivery, the sender leaves no wake-up queued', async () => {
  const account = await service.createAccount();
  const subscriptionId = await subscribe(service, account.userId, { url: receiver.url, events: ['Task Created'], retries: true });
  await createTask(service, account.apiKey);
  // Decided by a retry, which only the sender makes: answered, or past the short time-out every time on a loaded machine.
  await eventually(() => deliveriesOf(service, subscriptionId), (rows) => rows.length === 1 && rows[0]!.status !== 'pending' && rows[0]!.attempts >= 2);
  // The round that sent it left a wake-up (a few seconds ahead); the round that runs finds nothing and adds none.
  await eventually(roundWakeUps, (n) => n === 0, 30_000);
}, 45_000);
