// What shows a provider callback comes from the provider: a POST is signed with
// X-Hub-Signature-256 (HMAC-SHA256 of the exact body bytes under MESSAGING_APP_SECRET), and
// the verification handshake (GET) presents MESSAGING_VERIFY_TOKEN. Either secret unset
// refuses everything. server/http/provider-callbacks.ts reads the request and answers.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { sameSecretText } from '../../secrets.ts';

export const SIGNATURE_HEADER = 'x-hub-signature-256';

const SIGNATURE = /^sha256=([0-9a-fA-F]{64})$/;

/** Whether `header` is `sha256=<hex>` of the body under the app secret, compared in constant time. */
export function hasValidSignature(rawBody: Buffer, header: unknown, appSecret: string | undefined): boolean {
  if (!appSecret || typeof header !== 'string') return false;
  const match = SIGNATURE.exec(header.trim());
  if (!match) return false;
  const expected = createHmac('sha256', appSecret).update(rawBody).digest();
  return timingSafeEqual(expected, Buffer.from(match[1]!, 'hex'));
}

export type VerificationQuery = { mode: string | undefined; verifyToken: string | undefined; challenge: string | undefined };

/** The challenge to echo when the handshake asks to subscribe with the configured verify token; null otherwise. */
export function verificationChallenge(query: VerificationQuery, verifyToken: string | undefined): string | null {
  if (!verifyToken || query.mode !== 'subscribe' || query.verifyToken === undefined || query.challenge === undefined) return null;
  return sameSecretText(query.verifyToken, verifyToken) ? query.challenge : null;
}
