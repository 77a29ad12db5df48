// Signing secrets and the headers of one delivery attempt: the spec's own
// `X-Webhook-Signature: v1=<hex>` and, alongside it, the Standard Webhooks
// headers so receivers can verify with an off-the-shelf library.
import { createHmac, createSecretKey, randomBytes, type KeyObject } from 'node:crypto';

const SECRET_PREFIX = 'whsec_';

/** A new signing secret: `whsec_` + base64 of 32 random bytes (the Standard Webhooks form). */
export function mintSigningSecret(): string {
  return SECRET_PREFIX + randomBytes(32).toString('base64');
}

export type DeliveryHeadersInput = {
  deliveryId: string;
  /** 1-based. */
  attempt: number;
  event: string;
  /** null when the subscription has signing off; its keys (signingKeys()) when several deliveries share it. */
  secret: string | SigningKeys | null;
  /** The exact bytes sent; both signatures cover it unchanged. */
  body: string;
  /** Send time in Unix seconds. */
  timestamp: number;
};

/** The HMAC keys of a signing secret. */
export type SigningKeys = { spec: KeyObject; standard: KeyObject };

/**
 * Made once per secret and reused: an HMAC given the secret as text or bytes builds a key
 * from it each time, most of the cost of signing a small body.
 */
export function signingKeys(secret: string): SigningKeys {
  // Standard Webhooks: keyed with the decoded bytes after `whsec_`.
  const standard = Buffer.from(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret, 'base64');
  return { spec: createSecretKey(Buffer.from(secret, 'utf8')), standard: createSecretKey(standard) };
}

export function deliveryHeaders(input: DeliveryHeadersInput): Record<string, string> {
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'X-Webhook-Delivery': input.deliveryId,
    'X-Webhook-Attempt': String(input.attempt),
    'X-Webhook-Event': input.event,
  };
  if (input.secret === null) return headers;

  const keys = typeof input.secret === 'string' ? signingKeys(input.secret) : input.secret;
  const timestamp = String(Math.floor(input.timestamp));
  // Spec, Events: HMAC-SHA256 of `<timestamp>.<raw body>` keyed with the signing secret as written.
  const specSignature = createHmac('sha256', keys.spec).update(`${timestamp}.${input.body}`).digest('hex');
  headers['X-Webhook-Timestamp'] = timestamp;
  headers['X-Webhook-Signature'] = `v1=${specSignature}`;

  // Standard Webhooks: over `<id>.<timestamp>.<body>`.
  const standardSignature = createHmac('sha256', keys.standard).update(`${input.deliveryId}.${timestamp}.${input.body}`).digest('base64');
  headers['webhook-id'] = input.deliveryId;
  headers['webhook-timestamp'] = timestamp;
  headers['webhook-signature'] = `v1,${standardSignature}`;
  return headers;
}
