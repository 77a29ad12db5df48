// The credential cache's own rules, without a server: used only while changes are heard, a
// fill raced by a drop is refused, entries go per account, by expiry and least recently used
// first. test/auth/credential-cache.test.ts holds the service to them over HTTPS.
import { describe, expect, it } from 'vitest';
import { CredentialCache, type CachedKey, type CachedSession } from '../../server/auth/credential-cache.ts';

function key(accountId: string, expiresAt: number | null = null): CachedKey {
  return { kind: 'key', keyId: `key_${accountId}`, keyKind: 'main', accountId, plan: 'pro', scopes: null, bucketLimit: 300, expiresAt, version: 1 };
}

function session(accountId: string, expiresAt: number): CachedSession {
  return { kind: 'session', subject: `sub-${accountId}`, accountId, expiresAt };
}

function hearing(max = 10): CredentialCache {
  const cache = new CredentialCache(max);
  cache.listening(true);
  return cache;
}

describe('the credential cache', () => {
  it('neither uses nor fills anything until changes are heard', () => {
    const cache = new CredentialCache(10);
    expect(cache.inUse).toBe(false);
    cache.fill('a', key('acc_1'), cache.moment());
    expect(cache.size).toBe(0);
    expect(cache.holds('a')).toBe(false);
    cache.listening(true);
    expect(cache.inUse).toBe(true);
    cache.fill('a', key('acc_1'), cache.moment());
    expect(cache.get('a')).toEqual(key('acc_1'));
  });

  it('drops everything when hearing stops, and holds nothing from before when it resumes', () => {
    const cache = hearing();
    cache.fill('a', key('acc_1'), cache.moment());
    cache.listening(false);
    expect(cache.inUse).toBe(false);
    expect(cache.size).toBe(0);
    expect(cache.get('a')).toBeUndefined();
    cache.listening(true);
    expect(cache.get('a')).toBeUndefined();
  });

  it('refuses a fill read before a drop: a change heard while the statement ran wins', () => {
    const cache = hearing();
    const since = cache.moment();
    cache.forgetAccount('acc_2');
    cache.fill('a', key('acc_1'), since);
    expect(cache.holds('a')).toBe(false);
    cache.fill('a', key('acc_1'), cache.moment());
    expect(cache.holds('a')).toBe(true);
  });

  it("drops an account's entries, and only them, on its change", () => {
    const cache = hearing();
    cache.fill('a', key('acc_1'), cache.moment());
    cache.fill('b', session('acc_1', Date.now() + 60_000), cache.moment());
    cache.fill('c', key('acc_2'), cache.moment());
    cache.forgetAccount('acc_1');
    expect(cache.holds('a')).toBe(false);
    expect(cache.holds('b')).toBe(false);
    expect(cache.get('c')).toEqual(key('acc_2'));
    expect(cache.size).toBe(1);
  });

  it('an entry filled again under another account is dropped with the new account, not the old one', () => {
    const cache = hearing();
    cache.fill('a', key('acc_1'), cache.moment());
    cache.fill('a', key('acc_2'), cache.moment());
    cache.forgetAccount('acc_1');
    expect(cache.get('a')).toEqual(key('acc_2'));
    cache.forgetAccount('acc_2');
    expect(cache.holds('a')).toBe(false);
  });

  it('a forgotten entry leaves its account with nothing to drop', () => {
    const cache = hearing();
    cache.fill('a', key('acc_1'), cache.moment());
    cache.forget('a');
    cache.forget('a');
    expect(cache.size).toBe(0);
    cache.fill('b', key('acc_1'), cache.moment());
    cache.forgetAccount('acc_1');
    expect(cache.size).toBe(0);
  });

  it("forgetting one entry leaves the account's others to go with its change", () => {
    const cache = hearing();
    cache.fill('a', key('acc_1'), cache.moment());
    cache.fill('b', key('acc_1'), cache.moment());
    cache.forget('a');
    expect(cache.holds('b')).toBe(true);
    cache.forgetAccount('acc_1');
    expect(cache.holds('b')).toBe(false);
    expect(cache.size).toBe(0);
  });

  it('never answers past an expiry, and forgets the entry', () => {
    const cache = hearing();
    cache.fill('past', key('acc_1', Date.now() - 1), cache.moment());
    cache.fill('now', session('acc_1', Date.now()), cache.moment());
    cache.fill('later', key('acc_1', Date.now() + 60_000), cache.moment());
    cache.fill('never', key('acc_1', null), cache.moment());
    expect(cache.get('past')).toBeUndefined();
    expect(cache.holds('past')).toBe(false);
    expect(cache.get('now')).toBeUndefined();
    expect(cache.get('later')?.accountId).toBe('acc_1');
    expect(cache.get('never')?.accountId).toBe('acc_1');
  });

  it('holds at most its bound, the least recently used going first', () => {
    const cache = hearing(2);
    expect(cache.maxEntries).toBe(2);
    cache.fill('a', key('acc_1'), cache.moment());
    cache.fill('b', key('acc_2'), cache.moment());
    expect(cache.get('a')).toBeDefined(); // a is now the most recently used
    cache.fill('c', key('acc_3'), cache.moment());
    expect(cache.size).toBe(2);
    expect(cache.holds('b')).toBe(false);
    expect(cache.holds('a')).toBe(true);
    expect(cache.holds('c')).toBe(true);
    // The evicted entry no longer counts for its account.
    cache.forgetAccount('acc_2');
    expect(cache.size).toBe(2);
  });

  it('filling a name it holds replaces it without growing', () => {
    const cache = hearing(2);
    cache.fill('a', key('acc_1'), cache.moment());
    cache.fill('b', key('acc_2'), cache.moment());
    cache.fill('a', key('acc_3'), cache.moment());
    expect(cache.size).toBe(2);
    expect(cache.get('a')?.accountId).toBe('acc_3');
    expect(cache.holds('b')).toBe(true);
  });
});
