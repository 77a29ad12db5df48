// GET /chat-widgets/{configId}/otp (contract; spec OtpResponse): the widget's current
// RFC 6238 code, checked against an independent computation (node:crypto HMAC-SHA1 over
// the 30-second counter, RFC 4226 dynamic truncation) from the widget's own secret.
import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { startTestService, type TestService } from '../helpers/service.ts';

let service: TestService;
beforeAll(async () => {
  service = await startTestService();
});
afterAll(async () => {
  await service?.stop();
});

function base32Decode(text: string): Buffer {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
  let bits = '';
  for (const char of text.replace(/=+$/, '').toUpperCase()) {
    const value = alphabet.indexOf(char);
    if (value < 0) throw new Error(`not base32: ${char}`);
    bits += value.toString(2).padStart(5, '0');
  }
  const bytes: number[] = [];
  for (let i = 0; i + 8 <= bits.length; i += 8) bytes.push(parseInt(bits.slice(i, i + 8), 2));
  return Buffer.from(bytes);
}

function rfc6238(key: Buffer, unixSeconds: number): string {
  const counter = Buffer.alloc(8);
  counter.writeBigUInt64BE(BigInt(Math.floor(unixSeconds / 30)));
  const mac = createHmac('sha1', key).update(counter).digest();
  const offset = mac[mac.length - 1]! & 0x0f;
  const binary = (mac.readUInt32BE(offset) & 0x7fffffff) % 1_000_000;
  return String(binary).padStart(6, '0');
}

test('the independent computation matches the RFC 6238 test vector (SHA-1, T=59 s)', () => {
  // RFC 6238 Appendix B: secret "12345678901234567890", 8 digits 94287082 → 6 digits 287082.
  expect(rfc6238(Buffer.from('12345678901234567890'), 59)).toBe('287082');
});

test('200 {success, current_otp, expires_in}: the current 6-digit code of the widget\'s secret, expiring within 30 s', async () => {
  const { apiKey } = await service.createAccount();
  const widget = (await service.request('POST', '/chat-widgets', { apiKey, body: { name: 'OTP' } })).body.data;
  const { rows } = await service.services.pool.query('select otp_secret_sealed from chat_widgets where id = $1', [widget.id]);
  const key = base32Decode(service.services.secrets.unseal(rows[0].otp_secret_sealed));
  expect(key.length).toBeGreaterThanOrEqual(16);

  const before = Date.now() / 1000;
  const response = await service.request('GET', `/chat-widgets/${widget.id}/otp`, { apiKey });
  const after = Date.now() / 1000;
  expect(response.status).toBe(200);
  expect(response.body).toEqual({ success: true, current_otp: expect.stringMatching(/^\d{6}$/), expires_in: expect.any(Number) });
  expect(response.body.expires_in).toBeGreaterThanOrEqual(0);
  expect(response.body.expires_in).toBeLessThanOrEqual(30);
  // The answer was computed at some instant between sending and receiving.
  const candidates = new Set([rfc6238(key, before), rfc6238(key, after)]);
  expect(candidates).toContain(response.body.current_otp);
  // expires_in is what is left of the 30-second step the code belongs to.
  const remaining = new Set<number>();
  for (let second = Math.floor(before); second <= Math.floor(after); second += 1) {
    if (rfc6238(key, second) === response.body.current_otp) remaining.add(30 - (second % 30));
  }
  expect(remaining).toContain(response.body.expires_in);

  // Two widgets have different secrets.
  const second = (await service.request('POST', '/chat-widgets', { apiKey, body: { name: 'OTP 2' } })).body.data;
  const { rows: secondRows } = await service.services.pool.query('select otp_secret_sealed from chat_widgets where id = $1', [second.id]);
  expect(service.services.secrets.unseal(secondRows[0].otp_secret_sealed)).not.toBe(service.services.secrets.unseal(rows[0].otp_secret_sealed));
});

test('404 for an unknown widget', async () => {
  const { apiKey } = await service.createAccount();
  const response = await service.request('GET', '/chat-widgets/cw_unknown/otp', { apiKey });
  expect(response.status).toBe(404);
  expect(response.body).toEqual({ success: false, error: 'Chat widget not found', error_code: 404 });
});
