// Signing secrets and the headers of one delivery attempt: the spec's own
// `X-Webhook-Signature: v1=<hex>` and, alongside it, the Standard Webhooks
// headers so receivers can verify with an off-the-shelf library.
import { createHmac, randomBytes } from 'node:crypto';

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
  /** null when the subscription has signing off. */
  secret: string | null;
  /** The exact bytes sent; both signatures cover it unchanged. */
  body: string;
  /** Send time in Unix seconds. */
  timestamp: number;
};

export function deliveryHeaders(input: DeliveryHeadersInput): Record<string, string> {
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'X-Webhook-Delivery': input.deliveryId,
    'X-Webhook-Attempt': String(input.attempt),
    'X-Webhook-Event': input.event,
  };
  if (input.secret === null) return headers;

  const timestamp = String(Math.floor(input.timestamp));
  // Spec, Events: HMAC-SHA256 of `<timestamp>.<raw body>` keyed with the signing secret as written.
  const specSignature = createHmac('sha256', input.secret).update(`${timestamp}.${input.body}`).digest('hex');
  headers['X-Webhook-Timestamp'] = timestamp;
  headers['X-Webhook-Signature'] = `v1=${specSignature}`;

  // Standard Webhooks: keyed with the decoded bytes after `whsec_`, over `<id>.<timestamp>.<body>`.
  const standardKey = Buffer.from(input.secret.startsWith(SECRET_PREFIX) ? input.secret.slice(SECRET_PREFIX.length) : input.secret, 'base64');
  const standardSignature = createHmac('sha256', standardKey).update(`${input.deliveryId}.${timestamp}.${input.body}`).digest('base64');
  headers['webhook-id'] = input.deliveryId;
  headers['webhook-timestamp'] = timestamp;
  headers['webhook-signature'] = `v1,${standardSignature}`;
  return headers;
}
