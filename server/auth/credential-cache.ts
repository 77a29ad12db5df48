// The credentials this process has resolved, held so that a known credential costs neither
// the HMAC join, the account and plan read nor the ID token's verification again. Keyed by
// the credential's HMAC, never its value; an entry holds what the statement found (account,
// plan, scopes, expiry, the key's credential_version), nothing secret. What it never saves is
// the liveness check: a cached key is still confirmed live by its id in the request's one
// statement (sql/resolve-caller.ts), so a revocation takes effect on the next call.
// Bounded (least recently used goes first), dropped per account on a credential change, and
// dropped whole, and not used, while the LISTEN connection that hears changes is down.
import type { Scopes } from './scopes.ts';

/** An API key as its full statement found it, usable when filled. */
export type CachedKey = {
  kind: 'key';
  keyId: string;
  keyKind: 'main' | 'scoped';
  accountId: string;
  plan: string;
  scopes: Scopes | null;
  bucketLimit: number;
  /** The key's expiry (ms since the epoch), null when it has none. */
  expiresAt: number | null;
  /** The row's credential_version when read: the liveness check asks for the same. */
  version: number;
};

/** A verified ID token: its subject and `exp`, and the account the subject mapped to. */
export type CachedSession = { kind: 'session'; subject: string; accountId: string; expiresAt: number };

export type CachedCredential = CachedKey | CachedSession;

export class CredentialCache {
  private readonly entries = new Map<string, CachedCredential>();
  private readonly namesOfAccount = new Map<string, Set<string>>();
  private hearing = false;
  /** Raised by every drop: a statement read before one must not fill what it dropped. */
  private drops = 0;

  readonly maxEntries: number;

  constructor(maxEntries: number) {
    this.maxEntries = maxEntries;
  }

  get size(): number {
    return this.entries.size;
  }

  /** Whether changes are heard, so that entries may be used and filled. */
  get inUse(): boolean {
    return this.hearing;
  }

  /** The entry under `name` (the credential's HMAC) while it is usable; the most recently used from now. */
  get(name: string): CachedCredential | undefined {
    // Nothing is held while changes are not heard (listening() empties it, fill() refuses).
    const entry = this.entries.get(name);
    if (!entry) return undefined;
    if (entry.expiresAt !== null && entry.expiresAt <= Date.now()) {
      this.forget(name);
      return undefined;
    }
    this.entries.delete(name);
    this.entries.set(name, entry);
    return entry;
  }

  /** Whether an entry is held under `name`, without using it. */
  holds(name: string): boolean {
    return this.entries.has(name);
  }

  /** Marks the moment before a statement whose result may fill the cache. */
  moment(): number {
    return this.drops;
  }

  /** Holds `entry` under `name`, unless something was dropped since `since` or changes are not heard. */
  fill(name: string, entry: CachedCredential, since: number): void {
    if (!this.hearing || since !== this.drops) return;
    this.forget(name);
    this.entries.set(name, entry);
    let names = this.namesOfAccount.get(entry.accountId);
    if (!names) this.namesOfAccount.set(entry.accountId, (names = new Set()));
    names.add(name);
    while (this.entries.size > this.maxEntries) this.forget(this.entries.keys().next().value!);
  }

  forget(name: string): void {
    const entry = this.entries.get(name);
    if (!entry) return;
    this.entries.delete(name);
    const names = this.namesOfAccount.get(entry.accountId)!;
    names.delete(name);
    if (names.size === 0) this.namesOfAccount.delete(entry.accountId);
  }

  /** The account's credentials changed: its entries go. */
  forgetAccount(accountId: string): void {
    this.drops++;
    for (const name of this.namesOfAccount.get(accountId) ?? []) this.entries.delete(name);
    this.namesOfAccount.delete(accountId);
  }

  /**
   * Whether this process hears credential changes now. Either way everything held goes: while
   * not hearing, changes are missed, and nothing is used or filled until hearing again.
   */
  listening(hearing: boolean): void {
    this.drops++;
    this.entries.clear();
    this.namesOfAccount.clear();
    this.hearing = hearing;
  }
}
