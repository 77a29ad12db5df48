// What API key values look like: a prefix naming the kind, then 256 random bits.
import { randomBytes } from 'node:crypto';

export type KeyKind = 'main' | 'scoped';

const PREFIX: Record<KeyKind, string> = { main: 'mk_', scoped: 'sk_' };
const KEY_PATTERN = /^(mk|sk)_[A-Za-z0-9_-]{43}$/;
const JWT_PATTERN = /^eyJ[A-Za-z0-9_-]*\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/;

export function mintKeyValue(kind: KeyKind): string {
  return PREFIX[kind] + randomBytes(32).toString('base64url');
}

/** First 4 and last 4 characters joined by an ellipsis, as the specification shows keys. */
export function maskKey(value: string): string {
  return `${value.slice(0, 4)}…${value.slice(-4)}`;
}

/** A value that cannot be one of our keys is refused before any database work. */
export function isWellFormedKey(value: string): boolean {
  return KEY_PATTERN.test(value);
}

/** A bearer value is an identity-provider ID token when it has the JWT form. */
export function looksLikeJwt(value: string): boolean {
  return JWT_PATTERN.test(value);
}
