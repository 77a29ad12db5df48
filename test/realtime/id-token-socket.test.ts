// A browser cannot set a WebSocket's Authorization header: an ID token rides in the socket's
// connectionParams (`idToken`), as a key may (`apiKey`), and is checked like a bearer; a
// subscription opened with one ends at the token's `exp`.
import { afterAll, beforeAll, expect, test } from 'vitest';
import { updateAccount } from '../../server/accounts/update-account.ts';
import { RECHECK_EVERY_MS } from '../../server/auth/authorized-stream.ts';
import { startIdentityProvider, type TestIdentityProvider } from '../helpers/jwks.ts';
import { startTestService, type TestService } from '../helpers/service.ts';
import { openRawTrpcSocket } from '../helpers/trpc-socket.ts';

let idp: TestIdentityProvider;
let service: TestService;
beforeAll(async () => {
  idp = await startIdentityProvider();
  service = await startTestService({ env: idp.env });
});
afterAll(async () => {
  await service?.stop();
  await idp?.stop();
});

async function subscribeWith(params: Record<string, string>) {
  const socket = await openRawTrpcSocket(service.origin, { connectionParams: '1' });
  socket.send({ method: 'connectionParams', data: params });
  socket.send({ id: 1, method: 'subscription', params: { path: 'chatWidgets.onConversationEvent', input: {} } });
  const frame = await socket.waitFor((candidate) => candidate.id === 1 || candidate.id === null, 20_000);
  await socket.close();
  return frame;
}

test("an ID token in connectionParams opens the account's conversation feed; a forged one is refused", async () => {
  const account = await service.createAccount();
  const subject = `idp|inbox-${Date.now()}`;
  await updateAccount(service.services.orm.em.fork(), { userId: account.userId, oidcSubject: subject });
  const started = await subscribeWith({ idToken: await idp.sign({ sub: subject }) });
  expect(started.result?.type).toBe('started');
  const refused = await subscribeWith({ idToken: `${(await idp.sign({ sub: subject })).slice(0, -4)}AAAA` });
  expect(refused.error?.data.httpStatus).toBe(401);
});

test('an ID token whose sub, email or name holds a NUL or a lone surrogate is refused with 401 on the socket, never a 5xx', async () => {
  const cases: [{ sub: string; [claim: string]: string }, string][] = [
    [{ sub: 'idp|nul\u0000' }, 'sub'],
    [{ sub: 'idp|half\ud800' }, 'sub'],
    [{ sub: 'idp|someone', email: 'ada\u0000@example.com' }, 'email'],
    [{ sub: 'idp|someone', name: 'Ada \udc00' }, 'name'],
  ];
  for (const [claims, claim] of cases) {
    const refused = await subscribeWith({ idToken: await idp.sign(claims) });
    expect(refused.error?.data, JSON.stringify(claims)).toMatchObject({ code: 'UNAUTHORIZED', httpStatus: 401 });
    expect(refused.error?.message).toMatch(new RegExp(`^Invalid ID token: ${claim} must not contain `));
  }
});

test("an ID-token subscription ends with UNAUTHORIZED at the token's exp, not at the next periodic check", async () => {
  const account = await service.createAccount();
  const subject = `idp|short-lived-${Date.now()}`;
  await updateAccount(service.services.orm.em.fork(), { userId: account.userId, oidcSubject: subject });
  // A token that expired before its subscription started proves nothing: then again with a
  // longer life, still well short of the periodic check.
  for (let lifeSeconds = 4; ; lifeSeconds *= 2) {
    const socket = await openRawTrpcSocket(service.origin, { connectionParams: '1' });
    try {
      socket.send({ method: 'connectionParams', data: { idToken: await idp.sign({ sub: subject, exp: Math.floor(Date.now() / 1000) + lifeSeconds }) } });
      socket.send({ id: 1, method: 'subscription', params: { path: 'chatWidgets.onConversationEvent', input: {} } });
      const first = await socket.waitFor((frame) => (frame.id === 1 && frame.result?.type === 'started') || frame.error !== undefined, 20_000);
      if (first.result?.type !== 'started') {
        expect(first.error?.message).toBe('Invalid ID token: expired');
        if (lifeSeconds >= 16) throw new Error('no subscription started within 16 s of its token being signed');
        continue;
      }
      // The periodic check comes RECHECK_EVERY_MS after the start: the end must come before it.
      const ended = await socket.waitFor((frame) => frame.id === 1 && frame.error !== undefined, RECHECK_EVERY_MS - 1000);
      expect(ended.error).toMatchObject({ message: 'Invalid ID token: expired', data: { code: 'UNAUTHORIZED', httpStatus: 401 } });
      return;
    } finally {
      await socket.close();
    }
  }
});
