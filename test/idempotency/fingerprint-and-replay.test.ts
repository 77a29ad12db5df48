// Idempotent requests (README "Idempotent requests"): the key is 1 to 255 printable ASCII
// characters; the same request is the same target, credential and canonical input; the first
// response (4xx included, never a 5xx) is stored sealed and replayed to the same request only;
// another request with the key is 409, a retry while it runs 409, an unreadable response 422.
import { createHash } from 'node:crypto';
import { describe, expect, test } from 'vitest';
import { ApiError } from '../../server/errors.ts';
import {
  assertValidIdempotencyKey,
  canonicalJson,
  IDEMPOTENCY_KEY_HEADER,
  idempotentCallFor,
  requestFingerprint,
} from '../../server/idempotency/request-fingerprint.ts';
import type { KeyRow } from '../../server/idempotency/sql/idempotency-keys.ts';
import { REPLAYED_HEADER, replayedHeaders, replayFor, responseToStore, type StoredResponse } from '../../server/idempotency/stored-responses.ts';
import { createSecrets } from '../../server/secrets.ts';

const secrets = createSecrets(Buffer.from('a-master-secret-of-at-least-32-bytes!!'));
const mainKey = { type: 'main', id: 'key_main' } as const;

function thrown(run: () => unknown): ApiError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(ApiError);
    return error as ApiError;
  }
  throw new Error('expected a refusal');
}

describe('the Idempotency-Key header', () => {
  test('names the key of a POST, and what the POST calls; without the header nothing is idempotent', () => {
    expect(IDEMPOTENCY_KEY_HEADER).toBe('Idempotency-Key');
    expect(idempotentCallFor({ 'idempotency-key': 'k-1' }, '/v1', '/tasks')).toEqual({ key: 'k-1', target: 'POST /v1/tasks' });
    expect(idempotentCallFor({ 'idempotency-key': '' }, '/trpc/', 'tasks.create')).toEqual({ key: '', target: 'POST /trpc/tasks.create' });
    expect(idempotentCallFor({ 'x-api-key': 'mk_x' }, '/v1', '/tasks')).toBeUndefined();
  });

  test('sent twice, it is the two values as one header line would carry them', () => {
    expect(idempotentCallFor({ 'idempotency-key': ['a', 'b'] as unknown as string }, '/v1', '/tasks')?.key).toBe('a, b');
  });

  test('1 to 255 printable ASCII characters are a key', () => {
    for (const key of ['k', ' ', '~', 'x'.repeat(255), ' !"#$%&\'()*+,-./0123456789:;<=>?@AZ[\\]^_`az{|}~']) {
      expect(() => assertValidIdempotencyKey(key), key).not.toThrow();
    }
  });

  test('anything else is 400 invalid_idempotency_key', () => {
    for (const key of ['', 'x'.repeat(256), 'tab\there', 'line\n', 'del\x7f', '\x1f', 'é', 'key\u0000']) {
      const error = thrown(() => assertValidIdempotencyKey(key));
      expect(error.status, JSON.stringify(key)).toBe(400);
      expect(error.reason).toBe('invalid_idempotency_key');
      expect(error.message).toBe('Idempotency-Key header must be 1 to 255 printable ASCII characters');
    }
  });
});

describe('the same request', () => {
  test('canonical JSON sorts object keys at every depth, leaves undefined members out and writes undefined items as null', () => {
    expect(canonicalJson({ b: 1, a: { d: [3, undefined, { z: 1, y: 'é"' }], c: null }, B: true, e: undefined })).toBe(
      '{"B":true,"a":{"c":null,"d":[3,null,{"y":"é\\"","z":1}]},"b":1}',
    );
    expect(canonicalJson({ m: 1, z: 2, a: 3, n: 4 })).toBe('{"a":3,"m":1,"n":4,"z":2}');
    expect(canonicalJson(undefined)).toBe('null');
    expect(canonicalJson([])).toBe('[]');
    expect(canonicalJson({})).toBe('{}');
    expect(canonicalJson('text')).toBe('"text"');
  });

  test('the fingerprint is the SHA-256 of the target, the credential and the canonical input', () => {
    const expected = createHash('sha256').update('["POST /v1/tasks","main","key_main",{"a":1,"b":2}]').digest('base64url');
    expect(requestFingerprint('POST /v1/tasks', mainKey, { b: 2, a: 1 })).toBe(expected);
    expect(requestFingerprint('POST /v1/tasks', mainKey, undefined)).toBe(requestFingerprint('POST /v1/tasks', mainKey, null));
  });

  test('another target, credential or input is another request', () => {
    const first = requestFingerprint('POST /v1/tasks', mainKey, { title: 'a' });
    expect(requestFingerprint('POST /v1/lists', mainKey, { title: 'a' })).not.toBe(first);
    expect(requestFingerprint('POST /v1/tasks', { type: 'scoped', id: 'key_main' }, { title: 'a' })).not.toBe(first);
    expect(requestFingerprint('POST /v1/tasks', { type: 'main', id: 'key_other' }, { title: 'a' })).not.toBe(first);
    expect(requestFingerprint('POST /v1/tasks', mainKey, { title: 'b' })).not.toBe(first);
  });
});

const response: StoredResponse = {
  status: 201,
  contentType: 'application/json; charset=utf-8',
  body: '{"success":true,"data":{"api_key":"sk_secret-value"}}',
  headers: { location: '/v1/api-keys/key_1' },
};

function storedRow(overrides: Partial<KeyRow> = {}): KeyRow {
  const stored = responseToStore(secrets, response)!;
  return { fingerprint: 'fp', state: 'completed', status: stored.status, content_type: stored.contentType, response_sealed: stored.sealed, ...overrides };
}

describe('storing the first response', () => {
  test('status and content type as they are, body and headers sealed', () => {
    const stored = responseToStore(secrets, response)!;
    expect(stored.status).toBe(201);
    expect(stored.contentType).toBe('application/json; charset=utf-8');
    expect(stored.sealed).not.toContain('sk_secret-value');
    expect(JSON.parse(secrets.unseal(stored.sealed))).toEqual({ body: response.body, headers: response.headers });
  });

  test('a 4xx is stored; a 5xx is not (the key is given back, so a retry runs again)', () => {
    expect(responseToStore(secrets, { ...response, status: 499 })?.status).toBe(499);
    expect(responseToStore(secrets, { ...response, status: 500 })).toBeNull();
    expect(responseToStore(secrets, { ...response, status: 503 })).toBeNull();
  });
});

describe('a retry finding the key held', () => {
  test('the same request gets the stored response, which the replay marks', () => {
    expect(replayFor(secrets, storedRow(), 'fp')).toEqual(response);
    expect(REPLAYED_HEADER).toBe('Idempotent-Replayed');
    expect(replayedHeaders(response)).toEqual({ location: '/v1/api-keys/key_1', 'Idempotent-Replayed': 'true' });
  });

  test('another request is 409 idempotency_key_reused, finished or not', () => {
    for (const row of [storedRow({ fingerprint: 'other' }), storedRow({ fingerprint: 'other', state: 'running' })]) {
      const error = thrown(() => replayFor(secrets, row, 'fp'));
      expect([error.status, error.code]).toEqual([409, 'idempotency_key_reused']);
      expect(error.message).toBe('Idempotency-Key was already used with a different request; use a new key for a new request');
    }
  });

  test('while the first still runs, or has just given the key back, 409 idempotency_key_in_use', () => {
    for (const row of [storedRow({ state: 'running' }), null]) {
      const error = thrown(() => replayFor(secrets, row, 'fp'));
      expect([error.status, error.code]).toEqual([409, 'idempotency_key_in_use']);
      expect(error.message).toBe('A request with this Idempotency-Key is still being processed; retry later');
    }
  });

  test('a stored response that cannot be read (another SECRET_KEY, or stored unsealed) is 422 idempotency_key_unreadable, never run again', () => {
    const otherSecrets = createSecrets(Buffer.from('another-master-secret-of-32-bytes-or-more'));
    for (const row of [
      storedRow({ response_sealed: otherSecrets.seal(JSON.stringify({ body: '{}', headers: {} })) }),
      storedRow({ response_sealed: secrets.seal('not json') }),
      storedRow({ response_sealed: null }),
      storedRow({ status: null }),
      storedRow({ content_type: null }),
    ]) {
      const error = thrown(() => replayFor(secrets, row, 'fp'));
      expect([error.status, error.code]).toEqual([422, 'idempotency_key_unreadable']);
      expect(error.message).toBe('The response stored for this Idempotency-Key can no longer be read; use a new key for a new request');
    }
  });
});
