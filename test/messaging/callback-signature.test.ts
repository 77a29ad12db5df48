// Provider callbacks (contract): a POST is accepted only with X-Hub-Signature-256, the
// HMAC-SHA256 of its exact body under MESSAGING_APP_SECRET; the GET handshake answers the
// challenge only for hub.mode=subscribe and MESSAGING_VERIFY_TOKEN; either secret unset refuses.
import { createHmac } from 'node:crypto';
import { describe, expect, test } from 'vitest';
import { hasValidSignature, SIGNATURE_HEADER, verificationChallenge } from '../../server/messaging/callbacks/callback-signature.ts';

const SECRET = 'app-secret-for-callbacks';
const BODY = Buffer.from('{"object":"whatsapp_business_account","entry":[]}');
const hex = (body: Buffer, secret = SECRET) => createHmac('sha256', secret).update(body).digest('hex');

describe('X-Hub-Signature-256', () => {
  test('is the header the provider sends', () => {
    expect(SIGNATURE_HEADER).toBe('x-hub-signature-256');
  });

  test('sha256= and the hex HMAC of the body under the app secret is accepted, in either case and with surrounding spaces', () => {
    expect(hasValidSignature(BODY, `sha256=${hex(BODY)}`, SECRET)).toBe(true);
    expect(hasValidSignature(BODY, `sha256=${hex(BODY).toUpperCase()}`, SECRET)).toBe(true);
    expect(hasValidSignature(BODY, ` sha256=${hex(BODY)} `, SECRET)).toBe(true);
  });

  test('another secret, other bytes or a malformed header is refused', () => {
    const good = hex(BODY);
    for (const header of [
      `sha256=${hex(BODY, 'another-secret')}`,
      `sha256=${hex(Buffer.from(' ' + BODY.toString()))}`,
      `sha256=${'0'.repeat(64)}`,
      `sha1=${good}`,
      good,
      `xsha256=${good}`,
      `sha256=${good}0`,
      `sha256=${good.slice(1)}`,
      `sha256=${good.slice(0, 63)}g`,
      `sha256= ${good}`,
      '',
    ]) {
      expect(hasValidSignature(BODY, header, SECRET), header).toBe(false);
    }
  });

  test('an unset app secret or a header that is not one string refuses everything', () => {
    const header = `sha256=${hex(BODY, '')}`;
    expect(hasValidSignature(BODY, header, undefined)).toBe(false);
    expect(hasValidSignature(BODY, header, '')).toBe(false);
    expect(hasValidSignature(BODY, undefined, SECRET)).toBe(false);
    expect(hasValidSignature(BODY, [`sha256=${hex(BODY)}`], SECRET)).toBe(false);
  });
});

describe('the verification handshake', () => {
  const TOKEN = 'verify-token';
  const subscribe = { mode: 'subscribe', verifyToken: TOKEN, challenge: '1158201444' };

  test('answers the challenge for hub.mode=subscribe and the verify token', () => {
    expect(verificationChallenge(subscribe, TOKEN)).toBe('1158201444');
  });

  test('refuses another mode, another or no token, no challenge, and everything while the verify token is unset', () => {
    expect(verificationChallenge({ ...subscribe, mode: 'unsubscribe' }, TOKEN)).toBeNull();
    expect(verificationChallenge({ ...subscribe, mode: undefined }, TOKEN)).toBeNull();
    expect(verificationChallenge({ ...subscribe, verifyToken: 'wrong' }, TOKEN)).toBeNull();
    expect(verificationChallenge({ ...subscribe, verifyToken: `${TOKEN} ` }, TOKEN)).toBeNull();
    expect(verificationChallenge({ ...subscribe, verifyToken: undefined }, TOKEN)).toBeNull();
    expect(verificationChallenge({ ...subscribe, challenge: undefined }, TOKEN)).toBeNull();
    expect(verificationChallenge(subscribe, undefined)).toBeNull();
    expect(verificationChallenge({ ...subscribe, verifyToken: '' }, '')).toBeNull();
  });
});
