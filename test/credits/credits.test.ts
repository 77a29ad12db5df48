// Credits: atomic spending under concurrency (directly and through POST /tags),
// the low-balance crossing, GET /usage-limits and the agency's
// PUT /sub-accounts/{id}/usage-limits, with the events each change writes.
import { describe, expect, test } from 'vitest';
import { LOW_CREDIT_THRESHOLD, spendCredits } from '../../server/credits/spend-credits.ts';
import { PaymentRequiredError } from '../../server/errors.ts';
import { serviceForFile } from '../helpers/service-for-file.ts';
import type { TestService } from '../helpers/service.ts';

let service: TestService;
serviceForFile({}, (started) => ({ service } = started));

type EventRow = { name: string; account_id: string; payload: { user: { id: string }; data: Record<string, unknown> } };

async function eventsOf(accountId: string, name: string): Promise<EventRow[]> {
  const { rows } = await service.services.pool.query<EventRow>(
    'select name, account_id, payload from events where account_id = $1 and name = $2 order by created_at, id',
    [accountId, name],
  );
  return rows;
}

async function accountRow(accountId: string): Promise<{ credits: number; monthly_credits_used: number }> {
  const { rows } = await service.services.pool.query<{ credits: number; monthly_credits_used: number }>(
    'select credits, monthly_credits_used from accounts where id = $1',
    [accountId],
  );
  return rows[0]!;
}

/** Spends in its own transaction, as a request would. */
function spendAlone(accountId: string, amount: number): Promise<number> {
  return service.services.orm.em.fork().transactional((tx) => spendCredits(tx, accountId, amount, 'test'));
}

async function settle<T>(promises: Promise<T>[]): Promise<{ fulfilled: T[]; rejected: unknown[] }> {
  const results = await Promise.allSettled(promises);
  return {
    fulfilled: results.flatMap((result) => (result.status === 'fulfilled' ? [result.value] : [])),
    rejected: results.flatMap((result) => (result.status === 'rejected' ? [result.reason] : [])),
  };
}

/** An agency with one client account (agency_id set), as POST /sub-accounts leaves it. */
async function agencyWithClient(clientCredits = 100): Promise<{ agency: { userId: string; apiKey: string }; clientId: string }> {
  const agency = await service.createAccount({ agency: true });
  const client = await service.createAccount({ credits: clientCredits });
  await service.services.pool.query('update accounts set agency_id = $1 where id = $2', [agency.userId, client.userId]);
  return { agency, clientId: client.userId };
}


describe('spendCredits', () => {
  test('concurrent spends never take the balance below zero: final balance = start − successes, the rest are refused', async () => {
    const { userId } = await service.createAccount({ credits: 20 });
    const { fulfilled, rejected } = await settle(Array.from({ length: 50 }, () => spendAlone(userId, 1)));
    expect(fulfilled).toHaveLength(20);
    expect(rejected).toHaveLength(30);
    for (const error of rejected) expect(error).toBeInstanceOf(PaymentRequiredError);
    // Each success saw a different balance: the spends were serialised on the row.
    expect([...fulfilled].sort((a, b) => a - b)).toEqual(Array.from({ length: 20 }, (_, index) => index));
    expect(await accountRow(userId)).toEqual({ credits: 0, monthly_credits_used: 20 });
    expect(await eventsOf(userId, 'Credits Spent')).toHaveLength(20);
  });

  test('a spend larger than one credit is all or nothing', async () => {
    const { userId } = await service.createAccount({ credits: 10 });
    const { fulfilled, rejected } = await settle(Array.from({ length: 10 }, () => spendAlone(userId, 3)));
    expect(fulfilled).toHaveLength(3);
    expect(rejected).toHaveLength(7);
    expect((await accountRow(userId)).credits).toBe(10 - 3 * 3);
  });

  test('Credits Spent carries amount, reason and balance in the account’s user block; a refused spend writes no event', async () => {
    const { userId } = await service.createAccount({ credits: 5 });
    expect(await spendAlone(userId, 2)).toBe(3);
    await expect(spendAlone(userId, 4)).rejects.toBeInstanceOf(PaymentRequiredError);
    const spent = await eventsOf(userId, 'Credits Spent');
    expect(spent).toHaveLength(1);
    expect(spent[0]).toMatchObject({ account_id: userId, payload: { user: { id: userId }, data: { amount: 2, reason: 'test', balance: 3 } } });
    expect((await accountRow(userId)).credits).toBe(3);
  });

  test('Low Credit Balance is emitted only when a spend crosses below the threshold, not on every spend below it', async () => {
    const { userId } = await service.createAccount({ credits: LOW_CREDIT_THRESHOLD + 2 });
    for (let index = 0; index < 4; index++) await spendAlone(userId, 1);
    const low = await eventsOf(userId, 'Low Credit Balance');
    expect(low).toHaveLength(1);
    expect(low[0]!.payload.data).toEqual({ balance: LOW_CREDIT_THRESHOLD - 1, threshold: LOW_CREDIT_THRESHOLD });
    expect(low[0]!.payload.user.id).toBe(userId);

    // Back above the threshold, the next crossing is announced again.
    await service.services.pool.query('update accounts set credits = $1 where id = $2', [LOW_CREDIT_THRESHOLD, userId]);
    await spendAlone(userId, 5);
    expect(await eventsOf(userId, 'Low Credit Balance')).toHaveLength(2);
  });

  test('under concurrency the crossing is still announced exactly once', async () => {
    const { userId } = await service.createAccount({ credits: LOW_CREDIT_THRESHOLD + 10 });
    await settle(Array.from({ length: 30 }, () => spendAlone(userId, 1)));
    expect((await accountRow(userId)).credits).toBe(LOW_CREDIT_THRESHOLD - 20);
    expect(await eventsOf(userId, 'Low Credit Balance')).toHaveLength(1);
  });
});

describe('POST /tags under concurrency', () => {
  test('50 concurrent new assignments against 10 credits: 10 × 201, 40 × 402, balance 0', async () => {
    const { apiKey, userId } = await service.createAccount({ credits: 10 });
    const phones = Array.from({ length: 50 }, (_, index) => `+1415555${String(3000 + index).padStart(4, '0')}`);
    for (const phoneNumber of phones) {
      const created = await service.request('POST', '/contacts', { apiKey, body: { phoneNumber } });
      expect(created.status, created.text).toBe(200);
    }
    const responses = await Promise.all(phones.map((phoneNumber) => service.request('POST', '/tags', { apiKey, query: { tag: 'Rush', phoneNumber } })));
    const statuses = responses.map((response) => response.status);
    expect(statuses.filter((status) => status === 201)).toHaveLength(10);
    expect(statuses.filter((status) => status === 402)).toHaveLength(40);
    for (const response of responses.filter((r) => r.status === 402)) {
      expect(response.body).toEqual({ success: false, error: 'Insufficient credits', error_code: 402 });
    }
    // Every success names the one tag the first request created.
    const tagIds = new Set(responses.filter((r) => r.status === 201).map((r) => r.body.data.id));
    expect(tagIds.size).toBe(1);
    expect(await accountRow(userId)).toEqual({ credits: 0, monthly_credits_used: 10 });
    const { rows } = await service.services.pool.query<{ count: string }>('select count(*) from contact_tags where account_id = $1', [userId]);
    expect(Number(rows[0]!.count)).toBe(10);
    expect(await eventsOf(userId, 'Credits Spent')).toHaveLength(10);
  });
});

describe('GET /usage-limits', () => {
  test('{success, data: UsageLimits} of the selected account', async () => {
    const { apiKey, userId } = await service.createAccount({ credits: 250 });
    const response = await service.request('GET', '/usage-limits', { apiKey });
    expect(response.status).toBe(200);
    const { rows } = await service.services.pool.query<{ iso: string }>(
      `select to_char(last_reset_date at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as iso from accounts where id = $1`,
      [userId],
    );
    expect(response.body).toEqual({
      success: true,
      data: {
        monthly_credits: 250,
        monthly_credits_used: 0,
        last_reset_date: rows[0]!.iso,
        notifications: null,
        credits: 250,
        roll_over_to_next_month: false,
      },
    });
  });

  test("an agency reads a client account's usage limits with userId", async () => {
    const { agency, clientId } = await agencyWithClient(77);
    const response = await service.request('GET', '/usage-limits', { apiKey: agency.apiKey, query: { userId: clientId } });
    expect(response.status).toBe(200);
    expect(response.body.data).toMatchObject({ credits: 77, monthly_credits: 77 });
  });

  test("another account's usage limits are refused (403)", async () => {
    const a = await service.createAccount();
    const b = await service.createAccount();
    const response = await service.request('GET', '/usage-limits', { apiKey: b.apiKey, query: { userId: a.userId } });
    expect(response.status).toBe(403);
  });

  test('401 invalid key', async () => {
    const response = await service.request('GET', '/usage-limits', { apiKey: 'mk_wrong' });
    expect(response.status).toBe(401);
    expect(response.body).toEqual({ success: false, error: 'Invalid API key', error_code: 401 });
  });

  test('scoped keys: section Usage', async () => {
    const { userId } = await service.createAccount();
    const usageReader = await service.createScopedKey(userId, { read_only: true, tags: ['Usage'] });
    expect((await service.request('GET', '/usage-limits', { apiKey: usageReader })).status).toBe(200);
    const tagsOnly = await service.createScopedKey(userId, { read_only: false, tags: ['Tags'] });
    const denied = await service.request('GET', '/usage-limits', { apiKey: tagsOnly });
    expect(denied.status).toBe(403);
    expect(denied.body).toMatchObject({ error_code: 'key_scope_denied' });
  });
});

describe('PUT /sub-accounts/{id}/usage-limits', () => {
  test('the agency changes a client account: {success, data: UsageLimits}; raising credits emits Credits Recharged on the client account', async () => {
    const { agency, clientId } = await agencyWithClient(100);
    const response = await service.request('PUT', `/sub-accounts/${clientId}/usage-limits`, {
      apiKey: agency.apiKey,
      body: { monthly_credits: 500, credits: 400, roll_over_to_next_month: true },
    });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      success: true,
      data: {
        monthly_credits: 500,
        monthly_credits_used: 0,
        last_reset_date: expect.any(String),
        notifications: null,
        credits: 400,
        roll_over_to_next_month: true,
      },
    });
    const recharged = await eventsOf(clientId, 'Credits Recharged');
    expect(recharged).toHaveLength(1);
    expect(recharged[0]).toMatchObject({
      account_id: clientId,
      payload: { user: { id: clientId }, data: { previous: 100, credits: 400, added: 300 } },
    });
    expect(await eventsOf(agency.userId, 'Credits Recharged')).toEqual([]);
    const read = await service.request('GET', '/usage-limits', { apiKey: agency.apiKey, query: { userId: clientId } });
    expect(read.body.data).toEqual(response.body.data);
  });

  test('lowering credits or changing only the allowance emits nothing', async () => {
    const { agency, clientId } = await agencyWithClient(100);
    const lowered = await service.request('PUT', `/sub-accounts/${clientId}/usage-limits`, { apiKey: agency.apiKey, body: { credits: 40 } });
    expect(lowered.body.data.credits).toBe(40);
    const allowance = await service.request('PUT', `/sub-accounts/${clientId}/usage-limits`, { apiKey: agency.apiKey, body: { monthly_credits: 9 } });
    expect(allowance.body.data).toMatchObject({ monthly_credits: 9, credits: 40 });
    expect(await eventsOf(clientId, 'Credits Recharged')).toEqual([]);
  });

  test('400 when no field is sent', async () => {
    const { agency, clientId } = await agencyWithClient();
    const response = await service.request('PUT', `/sub-accounts/${clientId}/usage-limits`, { apiKey: agency.apiKey, body: {} });
    expect(response.status).toBe(400);
    expect(response.body).toEqual({
      success: false,
      error: 'No fields to update: send monthly_credits, credits or roll_over_to_next_month',
      error_code: 400,
    });
  });

  test('400 monthly_credits below 1 or negative credits, and nothing changes', async () => {
    const { agency, clientId } = await agencyWithClient(100);
    for (const body of [{ monthly_credits: 0 }, { credits: -1 }, { credits: 1.5 }]) {
      const response = await service.request('PUT', `/sub-accounts/${clientId}/usage-limits`, { apiKey: agency.apiKey, body });
      expect(response.status, JSON.stringify(body)).toBe(400);
      expect(response.body.error).toContain(Object.keys(body)[0]);
    }
    expect((await accountRow(clientId)).credits).toBe(100);
  });

  test('403 when the caller is not an agency', async () => {
    const { userId, apiKey } = await service.createAccount();
    const other = await service.createAccount();
    await service.services.pool.query('update accounts set agency_id = $1 where id = $2', [userId, other.userId]);
    const response = await service.request('PUT', `/sub-accounts/${other.userId}/usage-limits`, { apiKey, body: { credits: 5 } });
    expect(response.status).toBe(403);
    expect(response.body).toEqual({ success: false, error: 'Only agency accounts can manage sub-accounts', error_code: 403 });
  });

  test("404 for an unknown id, another agency's client, or an account that is not a client", async () => {
    const { agency } = await agencyWithClient();
    const other = await agencyWithClient(100);
    const standalone = await service.createAccount();
    for (const id of ['usr_unknown', other.clientId, standalone.userId, agency.userId]) {
      const response = await service.request('PUT', `/sub-accounts/${id}/usage-limits`, { apiKey: agency.apiKey, body: { credits: 5000 } });
      expect(response.status, id).toBe(404);
      expect(response.body).toEqual({ success: false, error: 'Sub-account not found', error_code: 404 });
    }
    expect((await accountRow(other.clientId)).credits).toBe(100);
    expect(await eventsOf(other.clientId, 'Credits Recharged')).toEqual([]);
  });

  test('agency-only: userId is refused (403)', async () => {
    const { agency, clientId } = await agencyWithClient();
    const response = await service.request('PUT', `/sub-accounts/${clientId}/usage-limits`, {
      apiKey: agency.apiKey,
      query: { userId: clientId },
      body: { credits: 5 },
    });
    expect(response.status).toBe(403);
  });

  test('scoped keys: section Sub Accounts, write', async () => {
    const { agency, clientId } = await agencyWithClient();
    const readOnly = await service.createScopedKey(agency.userId, { read_only: true, tags: ['Sub Accounts'] });
    const refused = await service.request('PUT', `/sub-accounts/${clientId}/usage-limits`, { apiKey: readOnly, body: { credits: 5 } });
    expect(refused.body).toMatchObject({ success: false, error_code: 'key_read_only' });
    const usageOnly = await service.createScopedKey(agency.userId, { read_only: false, tags: ['Usage'] });
    const denied = await service.request('PUT', `/sub-accounts/${clientId}/usage-limits`, { apiKey: usageOnly, body: { credits: 5 } });
    expect(denied.body).toMatchObject({ success: false, error_code: 'key_scope_denied' });
  });
});
