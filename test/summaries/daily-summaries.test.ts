// Daily summaries: writeDailySummaries for a UTC day, and the daily-summaries task run by the worker.
import { parseCrontab } from 'graphile-worker';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { Summary } from '../../server/db/entities/index.ts';
import { InvalidInputError } from '../../server/errors.ts';
import { enqueueJob } from '../../server/jobs.ts';
import { previousUtcDay, writeDailySummaries } from '../../server/summaries/daily-summaries.ts';
import { workerDefinition } from '../../workers/index.ts';
import { startTestService, type TestService } from '../helpers/service.ts';
import { createContact, eventsOf, eventually, record } from '../messages/conversation-fixtures.ts';

let service: TestService;
beforeAll(async () => {
  service = await startTestService();
});
afterAll(async () => {
  await service?.stop();
});

/** Records a message and moves it to the given moment (messages are always recorded "now"). */
async function messageAt(accountId: string, contactId: string, direction: 'inbound' | 'outbound', body: string, at: string) {
  const { messageId } = await record(service, accountId, contactId, direction, body);
  await service.services.pool.query('update messages set created_at = $1 where id = $2', [at, messageId]);
}

async function dailySummaries(accountId: string) {
  return service.services.orm.em.fork().find(Summary, { account: accountId, kind: 'daily' }, { orderBy: { day: 'asc' } });
}

describe('writeDailySummaries', () => {
  test('stores one daily summary (no contact) per account with messages that UTC day, and emits Daily Summary Created', async () => {
    const a = await service.createAccount();
    const b = await service.createAccount();
    const quiet = await service.createAccount();
    const a1 = await createContact(service, a.apiKey);
    const a2 = await createContact(service, a.apiKey);
    const b1 = await createContact(service, b.apiKey);
    await createContact(service, quiet.apiKey);
    await messageAt(a.userId, a1.contactId, 'inbound', 'My invoice total looks wrong.', '2031-03-14T00:00:00Z');
    await messageAt(a.userId, a1.contactId, 'outbound', 'We corrected the invoice total.', '2031-03-14T12:00:00Z');
    await messageAt(a.userId, a2.contactId, 'inbound', 'Do you ship to Canada?', '2031-03-14T23:59:59.999Z');
    await messageAt(a.userId, a2.contactId, 'inbound', 'Outside the day', '2031-03-15T00:00:00Z');
    await messageAt(a.userId, a2.contactId, 'inbound', 'Also outside', '2031-03-13T23:59:59.999Z');
    await messageAt(b.userId, b1.contactId, 'inbound', 'Where is my parcel?', '2031-03-14T08:00:00Z');

    const written = await writeDailySummaries(service.services.orm.em.fork(), '2031-03-14');
    expect(written.map((entry) => entry.accountId).sort()).toEqual([a.userId, b.userId].sort());

    const [summaryA] = await dailySummaries(a.userId);
    expect(summaryA).toMatchObject({
      kind: 'daily',
      contact: null,
      day: '2031-03-14',
      messageCount: 3,
      summary:
        'Daily summary for 2031-03-14: 3 messages (2 inbound, 1 outbound) with 2 contacts. Key points: ' +
        '[contact] My invoice total looks wrong. [agent] We corrected the invoice total. [contact] Do you ship to Canada?',
    });
    expect((await dailySummaries(b.userId)).map((summary) => summary.summary)).toEqual([
      'Daily summary for 2031-03-14: 1 message (1 inbound, 0 outbound) with 1 contact. Key points: [contact] Where is my parcel?',
    ]);
    expect(await dailySummaries(quiet.userId)).toEqual([]);

    const events = await eventsOf(service, a.userId, 'Daily Summary Created');
    expect(events).toHaveLength(1);
    expect(events[0].payload).toMatchObject({
      event: 'Daily Summary Created',
      user: { id: a.userId },
      data: {
        day: '2031-03-14',
        summary: { id: summaryA.id, day: '2031-03-14', summary: summaryA.summary, message_count: 3, created_at: summaryA.createdAt.toISOString() },
      },
    });
    expect(await eventsOf(service, quiet.userId, 'Daily Summary Created')).toEqual([]);

    // A second run for the same day writes nothing twice.
    expect(await writeDailySummaries(service.services.orm.em.fork(), '2031-03-14')).toEqual([]);
    expect(await dailySummaries(a.userId)).toHaveLength(1);
    expect(await eventsOf(service, a.userId, 'Daily Summary Created')).toHaveLength(1);
  });

  test('a day that is not a YYYY-MM-DD date is refused', async () => {
    for (const day of ['2031-02-30', '14/03/2031', '']) {
      await expect(writeDailySummaries(service.services.orm.em.fork(), day)).rejects.toBeInstanceOf(InvalidInputError);
    }
  });

  test('the cron run summarizes the UTC day before its tick', () => {
    expect(previousUtcDay(new Date('2031-03-15T00:05:00Z'))).toBe('2031-03-14');
    expect(previousUtcDay(new Date('2031-01-01T00:05:00Z'))).toBe('2030-12-31');
  });
});

describe('daily-summaries task', () => {
  test('is on the crontab, daily', () => {
    const items = parseCrontab(workerDefinition(service.services).crontab);
    expect(items.filter((item) => item.task === 'daily-summaries')).toHaveLength(1);
  });

  test('a daily-summaries job run by the worker writes the summaries of the day before its cron tick', async () => {
    const { userId, apiKey } = await service.createAccount();
    const { contactId } = await createContact(service, apiKey);
    await messageAt(userId, contactId, 'inbound', 'Is the store open on holidays?', '2031-04-01T10:00:00Z');
    const em = service.services.orm.em.fork();
    await em.transactional((tx) => enqueueJob(tx, 'daily-summaries', { _cron: { ts: '2031-04-02T00:05:00.000Z', backfilled: false } }));

    const [summary] = await eventually(async () => {
      const rows = await dailySummaries(userId);
      return rows.length ? rows : undefined;
    }, 'the daily summary');
    expect(summary).toMatchObject({ day: '2031-04-01', messageCount: 1 });
    expect(await eventsOf(service, userId, 'Daily Summary Created')).toHaveLength(1);
  });
});
