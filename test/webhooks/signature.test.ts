// Events: the delivery headers, the spec's `v1=` signature and the Standard Webhooks headers.
import { createHash, timingSafeEqual } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { describe, expect, test } from 'vitest';
import { deliveryHeaders, mintSigningSecret } from '../../server/webhooks/signature.ts';

/** HMAC-SHA256 built from SHA-256 (RFC 2104), independent of the service's createHmac. */
function hmacSha256(key: Buffer, message: string): Buffer {
  const blockSize = 64;
  let block = key.length > blockSize ? createHash('sha256').update(key).digest() : key;
  block = Buffer.concat([block, Buffer.alloc(blockSize - block.length)]);
  const inner = createHash('sha256')
    .update(Buffer.from(block.map((byte) => byte ^ 0x36)))
    .update(message)
    .digest();
  return createHash('sha256')
    .update(Buffer.from(block.map((byte) => byte ^ 0x5c)))
    .update(inner)
    .digest();
}

/** A receiver following the spec's receiver rules: raw body, freshness window, constant-time compare. */
function verifySpecSignature(secret: string, headers: Record<string, string>, rawBody: string, now: number): boolean {
  const timestamp = Number(headers['X-Webhook-Timestamp']);
  if (!Number.isInteger(timestamp) || Math.abs(now - timestamp) > 300) return false;
  const expected = Buffer.from(`v1=${hmacSha256(Buffer.from(secret, 'utf8'), `${timestamp}.${rawBody}`).toString('hex')}`);
  const received = Buffer.from(headers['X-Webhook-Signature'] ?? '');
  return expected.length === received.length && timingSafeEqual(expected, received);
}

const body = JSON.stringify({ event: 'Contact Created', user: { id: 'usr_1' }, data: { name: 'Zoë' } });
const now = () => Math.floor(Date.now() / 1000);

describe('signing secrets', () => {
  test('a signing secret is whsec_ followed by base64 of 32 random bytes', () => {
    const secret = mintSigningSecret();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
    expect(Buffer.from(secret.slice('whsec_'.length), 'base64')).toHaveLength(32);
    expect(mintSigningSecret()).not.toBe(secret);
  });
});

describe('delivery headers', () => {
  test('every delivery carries X-Webhook-Delivery, X-Webhook-Attempt (1-based) and X-Webhook-Event; unsigned ones nothing more', () => {
    const headers = deliveryHeaders({ deliveryId: 'dlv_1', attempt: 2, event: 'Task Created', secret: null, body, timestamp: now() });
    expect(headers).toEqual({
      'content-type': 'application/json',
      'X-Webhook-Delivery': 'dlv_1',
      'X-Webhook-Attempt': '2',
      'X-Webhook-Event': 'Task Created',
    });
  });

  test('with a signing secret, X-Webhook-Signature is v1=<hex HMAC-SHA256 of "<timestamp>.<raw body>"> keyed with the secret, X-Webhook-Timestamp in Unix seconds', () => {
    const secret = mintSigningSecret();
    const timestamp = now();
    const headers = deliveryHeaders({ deliveryId: 'dlv_2', attempt: 1, event: 'Contact Created', secret, body, timestamp });
    expect(headers['X-Webhook-Timestamp']).toBe(String(timestamp));
    expect(headers['X-Webhook-Signature']).toMatch(/^v1=[0-9a-f]{64}$/);
    expect(verifySpecSignature(secret, headers, body, now())).toBe(true);
    // The verifier refuses what it should, so the acceptance above means something.
    expect(verifySpecSignature(secret, headers, `${body} `, now())).toBe(false);
    expect(verifySpecSignature(mintSigningSecret(), headers, body, now())).toBe(false);
    expect(verifySpecSignature(secret, headers, body, now() + 301)).toBe(false);
  });

  test('with a signing secret, the Standard Webhooks headers verify with the standardwebhooks library', () => {
    const secret = mintSigningSecret();
    const headers = deliveryHeaders({ deliveryId: 'dlv_3', attempt: 3, event: 'New Message', secret, body, timestamp: now() });
    expect(headers['webhook-id']).toBe('dlv_3');
    expect(headers['webhook-timestamp']).toBe(headers['X-Webhook-Timestamp']);
    const receiver = new Webhook(secret);
    expect(receiver.verify(body, headers)).toEqual(JSON.parse(body));
    expect(() => receiver.verify(body.replace('Zoë', 'Zoe'), headers)).toThrow();
    expect(() => new Webhook(mintSigningSecret()).verify(body, headers)).toThrow();
    expect(() => receiver.verify(body, { ...headers, 'webhook-id': 'dlv_other' })).toThrow();
  });

  test('the delivery id stays the same across attempts; each attempt is signed over its own send time, which its headers carry', () => {
    const secret = mintSigningSecret();
    const sentAt = [now() - 60, now()];
    const [first, retry] = sentAt.map((timestamp, index) =>
      deliveryHeaders({ deliveryId: 'dlv_4', attempt: index + 1, event: 'Reads', secret, body, timestamp }),
    );
    for (const [index, headers] of [first, retry].entries()) {
      expect(headers['X-Webhook-Delivery']).toBe('dlv_4');
      expect(headers['X-Webhook-Attempt']).toBe(String(index + 1));
      expect(headers['X-Webhook-Timestamp']).toBe(String(sentAt[index]));
      // A receiver verifies each attempt from its own headers alone (spec and Standard Webhooks).
      expect(verifySpecSignature(secret, headers, body, sentAt[index])).toBe(true);
      expect(new Webhook(secret).verify(body, headers)).toEqual(JSON.parse(body));
      expect(headers['webhook-id']).toBe('dlv_4');
      expect(headers['webhook-timestamp']).toBe(String(sentAt[index]));
    }
    // The signature covers the time: the retry's signature does not verify with the first
    // attempt's timestamp, nor the first's with the retry's.
    expect(retry['X-Webhook-Signature']).not.toBe(first['X-Webhook-Signature']);
    expect(verifySpecSignature(secret, { ...retry, 'X-Webhook-Timestamp': first['X-Webhook-Timestamp'] }, body, sentAt[1])).toBe(false);
    expect(verifySpecSignature(secret, { ...first, 'X-Webhook-Timestamp': retry['X-Webhook-Timestamp'] }, body, sentAt[1])).toBe(false);
    expect(() => new Webhook(secret).verify(body, { ...retry, 'webhook-timestamp': first['webhook-timestamp'] })).toThrow();
  });
});
