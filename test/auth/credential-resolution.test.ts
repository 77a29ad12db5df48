// Authentication rules as decided without the database: where the credential is carried
// (apiKey parameter, then X-API-Key, then bearer), what a key and an ID token look like,
// what the resolving statement's row makes of the caller (401, the plan's 403, the
// credential, its rate-limit state), and the account `userId` or the input selects.
import { describe, expect, test } from 'vitest';
import { API_ACCESS_PLANS, keyCaller, sessionCaller } from '../../server/auth/caller-credential.ts';
import { carriesIdToken, pickCarrier, selectedUserId } from '../../server/auth/carrier.ts';
import { isWellFormedKey, looksLikeJwt, maskKey, mintKeyValue } from '../../server/auth/key-format.ts';
import type { Credential, Scopes } from '../../server/auth/scopes.ts';
import { assertSectionWhenSetAllowed, assertTargetAccountAllowed, selectAccount } from '../../server/auth/select-account.ts';
import { ApiError } from '../../server/errors.ts';
import type { CallerRow, KeyRow, KeySpend } from '../../server/auth/sql/resolve-caller.ts';

const OWN = 'usr_agency';
const CLIENT = 'usr_client';
const KEY = `mk_${'A'.repeat(43)}`;
const JWT = 'eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJhIn0.c2lnbmF0dXJl';

async function refusal(run: () => unknown): Promise<{ status: number; code: string | undefined; reason: string | undefined; message: string }> {
  try {
    await run();
  } catch (error) {
    expect(error).toBeInstanceOf(ApiError);
    const { status, code, reason, message } = error as ApiError;
    return { status, code, reason, message };
  }
  throw new Error('expected a refusal');
}

describe('the carrier', () => {
  test('the apiKey parameter wins over X-API-Key and bearer, even empty', () => {
    const headers = { 'x-api-key': 'from-header', authorization: 'Bearer from-bearer' };
    expect(pickCarrier(new URLSearchParams({ apiKey: 'from-query' }), headers)).toEqual({ value: 'from-query', from: 'query' });
    expect(pickCarrier(new URLSearchParams('apiKey='), headers)).toEqual({ value: '', from: 'query' });
  });

  test('then X-API-Key, then the bearer token', () => {
    const none = new URLSearchParams();
    expect(pickCarrier(none, { 'x-api-key': 'from-header', authorization: 'Bearer x' })).toEqual({ value: 'from-header', from: 'header' });
    expect(pickCarrier(none, { 'x-api-key': ['a', 'b'] as unknown as string, authorization: 'Bearer x' })).toEqual({ value: 'x', from: 'bearer' });
    expect(pickCarrier(none, { authorization: 'Bearer  token-value ' })).toEqual({ value: 'token-value', from: 'bearer' });
    expect(pickCarrier(none, { authorization: 'bEARER t' })).toEqual({ value: 't', from: 'bearer' });
  });

  test('no carrier: nothing, another scheme, or a bearer without its space', () => {
    const none = new URLSearchParams('userId=usr_1');
    for (const authorization of [undefined, 'Basic dXNlcjpwYXNz', 'Bearertoken', 'x Bearer token']) {
      expect(pickCarrier(none, { authorization }), authorization).toBeNull();
    }
  });

  test('only a bearer value of the JWT form is an ID token', () => {
    expect(carriesIdToken({ value: JWT, from: 'bearer' })).toBe(true);
    expect(carriesIdToken({ value: KEY, from: 'bearer' })).toBe(false);
    expect(carriesIdToken({ value: JWT, from: 'header' })).toBe(false);
    expect(carriesIdToken({ value: JWT, from: 'query' })).toBe(false);
  });

  test('userId selects an account when present and not empty', () => {
    expect(selectedUserId(new URLSearchParams(`userId=${CLIENT}`))).toBe(CLIENT);
    expect(selectedUserId(new URLSearchParams('userId='))).toBeNull();
    expect(selectedUserId(new URLSearchParams())).toBeNull();
  });
});

describe('key and token forms', () => {
  test('a minted key is its kind prefix and 256 random bits in base64url', () => {
    const main = mintKeyValue('main');
    const scoped = mintKeyValue('scoped');
    expect(main).toMatch(/^mk_[A-Za-z0-9_-]{43}$/);
    expect(scoped).toMatch(/^sk_[A-Za-z0-9_-]{43}$/);
    expect(mintKeyValue('main')).not.toBe(main);
    expect([isWellFormedKey(main), isWellFormedKey(scoped)]).toEqual([true, true]);
  });

  test('a key is shown as its first 4 and last 4 characters', () => {
    expect(maskKey('mk_abcdefghijklmnopqrstuvwxyz')).toBe('mk_a…wxyz');
  });

  test('anything else is refused before the database', () => {
    const body = 'A'.repeat(43);
    for (const value of [`xk_${body}`, `mk_${body.slice(1)}`, `mk_${body}A`, `mk_${body.slice(1)}+`, `mk_${body.slice(1)}=`, ` mk_${body}`, `mk_${body}\n`, `mkx${body}`, JWT, '']) {
      expect(isWellFormedKey(value), value).toBe(false);
    }
    expect(isWellFormedKey(`sk_${'_-09azAZ'.repeat(5)}abc`)).toBe(true);
  });

  test('the JWT form: eyJ, then three base64url parts, the last possibly empty', () => {
    expect(looksLikeJwt(JWT)).toBe(true);
    expect(looksLikeJwt('eyJ.payload.')).toBe(true);
    expect(looksLikeJwt('eyJhbGci-_.e_-30.s-_9')).toBe(true);
    for (const value of ['eyJhbGci..sig', 'eyJa.b', 'eyJa.b.c.d', 'xeyJa.b.c', 'ayJa.b.c', 'eyJa.b+.c', 'eyJa.b.c=', 'eyJa=.b.c', KEY]) {
      expect(looksLikeJwt(value), value).toBe(false);
    }
  });
});

function keyRow(overrides: Partial<KeyRow> = {}): KeyRow {
  return {
    key_id: 'key_main',
    kind: 'main',
    account_id: OWN,
    scopes: null,
    lapsed: false,
    bucket_limit: 300,
    usable: true,
    now_epoch: 1_800_000_015.5,
    window_epoch: 1_800_000_000,
    key_count: 0,
    account_count: 0,
    ...overrides,
  };
}
const spend = (row: KeyRow, outcome: Partial<Omit<KeySpend, 'row'>> = {}): KeySpend => ({ row, refusedBy: null, credentialUsed: 7, accountUsed: 40, ...outcome });

describe('the API key caller', () => {
  test('only plans with api_access may use API keys', () => {
    expect(API_ACCESS_PLANS).toEqual(['pro']);
  });

  test('no key with that value, or one revoked or expired, is 401 Invalid API key', async () => {
    for (const found of [null, { ...spend(keyRow()), row: null as unknown as KeyRow }, spend(keyRow({ lapsed: true, usable: false }))]) {
      expect(await refusal(() => keyCaller(found, true))).toMatchObject({ status: 401, message: 'Invalid API key' });
    }
  });

  test("a key of an account whose plan lacks api_access is 403, the feature's refusal", async () => {
    expect(await refusal(() => keyCaller(spend(keyRow({ usable: false })), true))).toEqual({
      status: 403,
      code: undefined,
      reason: 'feature_disabled',
      message: 'The api_access feature is not enabled for this account',
    });
  });

  test('the main key: full access, its budget and the account ceiling as counted', () => {
    expect(keyCaller(spend(keyRow(), { refusedBy: 'account' }), true)).toEqual({
      credential: { type: 'main', id: 'key_main', accountId: OWN, scopes: null, rateLimitPerMin: 300 },
      rateLimit: {
        counted: true,
        refusedBy: 'account',
        policy: 'main-key',
        windowStart: 1_800_000_000,
        now: 1_800_000_015.5,
        credential: { limit: 300, used: 7 },
        account: { limit: 1200, used: 40 },
      },
      targetAgencyId: null,
    });
  });

  test('a scoped key carries its scopes and its own limit; the agency of the selected account is passed on', () => {
    const scopes: Scopes = { read_only: true, tags: ['Contacts'], sub_account_ids: [], rate_limit_per_min: 60 };
    const caller = keyCaller(spend(keyRow({ key_id: 'key_s', kind: 'scoped', scopes, bucket_limit: 60, target_agency_id: OWN })), true);
    expect(caller.credential).toEqual({ type: 'scoped', id: 'key_s', accountId: OWN, scopes, rateLimitPerMin: 60 });
    expect(caller.rateLimit.policy).toBe('scoped-key');
    expect(caller.rateLimit.credential).toEqual({ limit: 60, used: 7 });
    expect(caller.targetAgencyId).toBe(OWN);
    // A main key's row never lends it scopes.
    expect(keyCaller(spend(keyRow({ scopes })), true).credential.scopes).toBeNull();
  });

  test('an uncounted request (the usage endpoint) is never refused', () => {
    expect(keyCaller(spend(keyRow(), { refusedBy: 'credential' }), false).rateLimit).toMatchObject({ counted: false, refusedBy: null });
  });
});

function sessionRow(overrides: Partial<CallerRow> = {}): CallerRow {
  return {
    key_id: null,
    kind: 'session',
    account_id: OWN,
    key_hash: null,
    scopes: null,
    revoked: false,
    expired: false,
    plan: 'free',
    bucket_limit: 300,
    usable: true,
    now_epoch: 1_800_000_030,
    window_epoch: 1_800_000_000,
    bucket_counted: 12,
    account_counted: 50,
    bucket_before: 11,
    account_before: 49,
    target_agency_id: null,
    ...overrides,
  };
}

const EXP = 1_800_000_600_000;
const token = (subject: string) => ({ subject, expiresAt: EXP });

describe('the ID-token caller', () => {
  test('a subject no account has is 401', async () => {
    expect(await refusal(() => sessionCaller(token('oidc|nobody'), null, true))).toMatchObject({
      status: 401,
      message: 'Invalid ID token: no account for this subject',
    });
  });

  test('an owner session named by the subject until its exp, counted in its own bucket and the account ceiling', () => {
    expect(sessionCaller(token('oidc|ada'), sessionRow({ target_agency_id: 'usr_x' }), true)).toEqual({
      credential: { type: 'session', id: 'oidc|ada', accountId: OWN, scopes: null, rateLimitPerMin: 300, expiresAt: EXP },
      rateLimit: {
        counted: true,
        refusedBy: null,
        policy: 'session',
        windowStart: 1_800_000_000,
        now: 1_800_000_030,
        credential: { limit: 300, used: 12 },
        account: { limit: 1200, used: 50 },
      },
      targetAgencyId: 'usr_x',
    });
  });

  test('the bucket that did not count the request refused it, the credential first; used is then the count before', () => {
    const refused = sessionCaller(token('s'), sessionRow({ bucket_counted: null, account_counted: null, bucket_before: 300, account_before: 700 }), true).rateLimit;
    expect([refused.refusedBy, refused.credential.used, refused.account.used]).toEqual(['credential', 300, 700]);
    const byAccount = sessionCaller(token('s'), sessionRow({ account_counted: null, account_before: 1200 }), true).rateLimit;
    expect([byAccount.refusedBy, byAccount.credential.used, byAccount.account.used]).toEqual(['account', 12, 1200]);
    const nothing = sessionCaller(token('s'), sessionRow({ bucket_counted: null, account_counted: null, bucket_before: null, account_before: null }), false).rateLimit;
    expect([nothing.refusedBy, nothing.credential.used, nothing.account.used]).toEqual([null, 0, 0]);
  });
});

const main: Credential = { type: 'main', id: 'key_main', accountId: OWN, scopes: null, rateLimitPerMin: 300 };
const session: Credential = { type: 'session', id: 'oidc|ada', accountId: OWN, scopes: null, rateLimitPerMin: 300 };
const scoped = (subAccountIds: string[]): Credential => ({
  type: 'scoped',
  id: 'key_s',
  accountId: OWN,
  scopes: { read_only: false, tags: [], sub_account_ids: subAccountIds, rate_limit_per_min: 60 },
  rateLimitPerMin: 60,
});

describe('the account acted on', () => {
  test("without userId, or with the caller's own, the caller's account", () => {
    expect(selectAccount(scoped([]), null, null)).toEqual({ id: OWN, managed: false });
    expect(selectAccount(scoped([]), OWN, null)).toEqual({ id: OWN, managed: false });
  });

  test('userId is refused on agency-only and key management endpoints, even naming the caller', async () => {
    expect(await refusal(() => selectAccount(main, OWN, null, { agencyOnly: true }))).toMatchObject({ status: 403, message: 'userId cannot be used on agency-only endpoints' });
    expect(await refusal(() => selectAccount(main, OWN, null, { ownAccountOnly: true }))).toMatchObject({ status: 403, message: 'userId cannot be used on key management endpoints' });
    expect(selectAccount(main, null, null, { agencyOnly: true, ownAccountOnly: true })).toEqual({ id: OWN, managed: false });
  });

  test('a client account of the caller agency, by the main key, an owner session or a scoped key that lists it', () => {
    for (const credential of [main, session, scoped([CLIENT]), scoped(['*'])]) {
      expect(selectAccount(credential, CLIENT, OWN)).toEqual({ id: CLIENT, managed: true });
    }
  });

  test('an account the caller does not manage is 403; key_scope_denied for a scoped key', async () => {
    expect(await refusal(() => selectAccount(main, CLIENT, 'usr_other_agency'))).toEqual({
      status: 403,
      code: undefined,
      reason: 'forbidden',
      message: 'You do not have access to that account',
    });
    expect(await refusal(() => selectAccount(session, CLIENT, null))).toMatchObject({ status: 403, code: undefined });
    for (const agency of [OWN, 'usr_other_agency']) {
      expect(await refusal(() => selectAccount(scoped(['usr_else']), CLIENT, agency))).toMatchObject({ status: 403, code: 'key_scope_denied' });
    }
    expect(await refusal(() => selectAccount(scoped(['*']), CLIENT, 'usr_other_agency'))).toEqual({
      status: 403,
      code: 'key_scope_denied',
      reason: 'forbidden',
      message: 'This API key is not allowed to act on that account',
    });
  });
});

describe('a client account named in the input', () => {
  const field = { inputField: 'subAccountId' };
  const input = (value: unknown) => async () => value;

  test('the main key and sessions are not checked here, nor a procedure naming no account', async () => {
    let read = false;
    const readInput = async () => {
      read = true;
      return { subAccountId: CLIENT };
    };
    await assertTargetAccountAllowed(main, field, readInput);
    await assertTargetAccountAllowed(session, 'everyClient', readInput);
    await assertTargetAccountAllowed(scoped([]), undefined, readInput);
    expect(read).toBe(false);
  });

  test('every client needs sub_account_ids ["*"]', async () => {
    await assertTargetAccountAllowed(scoped(['*']), 'everyClient', undefined);
    expect(await refusal(() => assertTargetAccountAllowed(scoped([CLIENT]), 'everyClient', undefined))).toMatchObject({ status: 403, code: 'key_scope_denied' });
  });

  test("a scoped key may name its own account or one it lists; an input that cannot be read is refused", async () => {
    await assertTargetAccountAllowed(scoped([CLIENT]), field, input({ subAccountId: CLIENT }));
    await assertTargetAccountAllowed(scoped(['*']), field, input({ subAccountId: 'usr_any' }));
    await assertTargetAccountAllowed(scoped([]), field, input({ subAccountId: OWN }));
    await assertTargetAccountAllowed(scoped(['42']), field, input({ subAccountId: 42 }));
    for (const value of [{ subAccountId: 'usr_other' }, { subAccountId: 43 }]) {
      expect(await refusal(() => assertTargetAccountAllowed(scoped([CLIENT, '42']), field, input(value)))).toEqual({
        status: 403,
        code: 'key_scope_denied',
        reason: 'forbidden',
        message: 'This API key is not allowed to act on that account',
      });
    }
    expect(await refusal(() => assertTargetAccountAllowed(scoped(['*']), field, undefined))).toMatchObject({
      status: 403,
      code: 'key_scope_denied',
      message: 'This API key is not allowed to act on that account',
    });
  });

  test('an input that names no account is left to the input parser', async () => {
    for (const value of [{}, { subAccountId: null }, { subAccountId: undefined }, null, 'text', 7]) {
      await assertTargetAccountAllowed(scoped([]), field, input(value));
    }
  });
});

describe('an input flag that widens the call', () => {
  const flag = (value: unknown) => async () => ({ apply_to_sub_accounts: value, signing_secret: value });

  test('a flag for every client needs sub_account_ids ["*"] when it is true, and nothing otherwise', async () => {
    const target = { everyClientWhenSet: 'apply_to_sub_accounts' };
    await assertTargetAccountAllowed(scoped(['*']), target, flag(true));
    for (const value of [false, 'true', 1, null, undefined]) await assertTargetAccountAllowed(scoped([CLIENT]), target, flag(value));
    expect(await refusal(() => assertTargetAccountAllowed(scoped([CLIENT]), target, flag(true)))).toEqual({
      status: 403,
      code: 'key_scope_denied',
      reason: 'forbidden',
      message: 'This API key is not allowed to act on every client account; that needs sub_account_ids ["*"]',
    });
    expect(await refusal(() => assertTargetAccountAllowed(scoped(['*']), target, undefined))).toMatchObject({ status: 403, code: 'key_scope_denied' });
  });

  test("a flag that needs another section holds a scoped key to that section's access when it is true", async () => {
    const rule = { field: 'signing_secret', section: 'Integrations', access: 'write' } as const;
    const withTags = (tags: Scopes['tags'], readOnly = false): Credential => ({ ...scoped([]), scopes: { ...scoped([]).scopes!, tags, read_only: readOnly } });
    await assertSectionWhenSetAllowed(withTags(['Webhooks', 'Integrations']), rule, flag(true));
    await assertSectionWhenSetAllowed(withTags(['Webhooks']), rule, flag(false));
    await assertSectionWhenSetAllowed(withTags(['Webhooks']), undefined, flag(true));
    await assertSectionWhenSetAllowed(main, rule, undefined);
    expect(await refusal(() => assertSectionWhenSetAllowed(withTags(['Webhooks']), rule, flag(true)))).toMatchObject({ status: 403, code: 'key_scope_denied' });
    expect(await refusal(() => assertSectionWhenSetAllowed(withTags(['Integrations'], true), rule, flag(true)))).toMatchObject({ status: 403, code: 'key_read_only' });
    expect(await refusal(() => assertSectionWhenSetAllowed(withTags(['Integrations']), rule, undefined))).toMatchObject({ status: 403, code: 'key_scope_denied' });
  });
});
