// What makes two idempotent requests "the same request": what they call, the credential
// itself (not its account), and the input as canonical JSON, digested. The key they share
// must be 1 to 255 printable ASCII characters.
import { createHash } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import type { Credential } from '../auth/scopes.ts';
import { InvalidInputError } from '../errors.ts';

export const IDEMPOTENCY_KEY_HEADER = 'Idempotency-Key';

const VALID_KEY = /^[\x20-\x7e]{1,255}$/;

/** The key and target of a POST carrying the header (`prefix` + `path` is what it calls), undefined without it. */
export function idempotentCallFor(headers: IncomingHttpHeaders, prefix: string, path: string): { key: string; target: string } | undefined {
  const value = headers['idempotency-key'];
  if (value === undefined) return undefined;
  return { key: Array.isArray(value) ? value.join(', ') : value, target: `POST ${prefix}${path}` };
}

/** 400 unless the key is 1 to 255 printable ASCII characters. */
export function assertValidIdempotencyKey(key: string): void {
  if (!VALID_KEY.test(key)) {
    throw new InvalidInputError(`${IDEMPOTENCY_KEY_HEADER} header must be 1 to 255 printable ASCII characters`, {
      reason: 'invalid_idempotency_key',
    });
  }
}

/** JSON with object keys sorted and undefined members left out, so the same input always has the same text. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map((item) => canonicalJson(item ?? null)).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    const entries = Object.entries(value)
      .filter(([, item]) => item !== undefined)
      // An object's keys are distinct: no two compare equal.
      .sort(([a], [b]) => (a < b ? -1 : 1));
    return `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${canonicalJson(item)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** The request as a digest: what it calls (`POST /v1/tasks`), who calls, and its input. */
export function requestFingerprint(target: string, credential: Pick<Credential, 'type' | 'id'>, input: unknown): string {
  return createHash('sha256').update(canonicalJson([target, credential.type, credential.id, input ?? null])).digest('base64url');
}
