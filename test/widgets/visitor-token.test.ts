// Owner-verified visitor identity (contract, "The chat widget's visitors"): an HS256 token
// signed with the widget's identity secret (its UTF-8 bytes), `sub` the site's user id,
// optional `email` and `name`, `exp` at most 24 hours ahead; claims obey the input rules.
// off ignores the header, optional verifies a token when sent, required needs one.
import { SignJWT } from 'jose';
import { afterEach, beforeEach, describe, expect, test, vi } from 'vitest';
import { ApiError } from '../../server/errors.ts';
import { createSecrets, type Secrets } from '../../server/secrets.ts';
import {
  checkWidgetVisitor,
  CLOCK_TOLERANCE_SECONDS,
  IDENTITY_MODES,
  IDENTITY_SECRET_PREFIX,
  identityModeOf,
  identityTokenOf,
  MAX_TOKEN_LIFETIME_SECONDS,
  resolveWidgetVisitor,
  verifyVisitorToken,
  VISITOR_IDENTITY_HEADER,
  VisitorIdentityError,
} from '../../server/widgets/visitor-identity.ts';

const secrets = createSecrets(Buffer.from('a-master-secret-of-at-least-32-bytes!!'));
const SECRET = `wis_${'s'.repeat(43)}`;
const sealed = secrets.seal(SECRET);
const NOW = 1_800_000_000;

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['Date'] });
  vi.setSystemTime(NOW * 1000);
});
afterEach(() => {
  vi.useRealTimers();
});

function sign(claims: Record<string, unknown>, options: { secret?: string; alg?: string } = {}): Promise<string> {
  return new SignJWT({ sub: 'site-user-1', exp: NOW + 3600, ...claims })
    .setProtectedHeader({ alg: options.alg ?? 'HS256' })
    .sign(new TextEncoder().encode(options.secret ?? SECRET));
}

async function refusal(run: () => Promise<unknown>): Promise<string> {
  try {
    await run();
  } catch (error) {
    expect(error).toBeInstanceOf(VisitorIdentityError);
    expect([(error as ApiError).status, (error as ApiError).reason]).toEqual([401, 'visitor_identity']);
    return (error as ApiError).message;
  }
  throw new Error('expected a refusal');
}

const verify = async (token: string, secret: string | null = sealed) => verifyVisitorToken(secrets, secret, token);

test('the names and numbers of the rule', () => {
  expect([IDENTITY_SECRET_PREFIX, VISITOR_IDENTITY_HEADER, MAX_TOKEN_LIFETIME_SECONDS, CLOCK_TOLERANCE_SECONDS]).toEqual(['wis_', 'x-visitor-identity', 86_400, 60]);
  expect(IDENTITY_MODES).toEqual(['off', 'optional', 'required']);
  expect(new VisitorIdentityError('x').name).toBe('VisitorIdentityError');
});

describe('the mode and the header', () => {
  test('settings.identityVerification is off, optional or required; anything else is off', () => {
    for (const mode of IDENTITY_MODES) expect(identityModeOf({ identityVerification: mode })).toBe(mode);
    for (const settings of [null, undefined, {}, 'required', { identityVerification: 'REQUIRED' }, { identityVerification: true }]) {
      expect(identityModeOf(settings)).toBe('off');
    }
  });

  test('the token is the header trimmed, the first when sent twice; empty is none', () => {
    expect(identityTokenOf(' eyJ.a.b ')).toBe('eyJ.a.b');
    expect(identityTokenOf(['first', 'second'])).toBe('first');
    for (const header of [undefined, '', '   ', []]) expect(identityTokenOf(header)).toBeUndefined();
  });
});

describe('a token that verifies', () => {
  test('names the site user, with the email and name it claims, accepted until exp and the clock tolerance', async () => {
    expect(await verify(await sign({ email: ' ada@example.com ', name: 'Ada' }))).toEqual({
      sub: 'site-user-1',
      email: 'ada@example.com',
      name: 'Ada',
      acceptedUntil: NOW + 3600 + 60,
    });
  });

  test('email and name are optional, and ignored unless non-blank text', async () => {
    for (const claims of [{}, { email: '  ', name: '' }, { email: 42, name: { first: 'Ada' } }]) {
      expect(await verify(await sign(claims))).toMatchObject({ email: null, name: null });
    }
  });

  test('email is kept to 320 characters and name to 200, never cut through a surrogate pair', async () => {
    const verified = await verify(await sign({ email: 'e'.repeat(330), name: 'n'.repeat(199) + '😀' }));
    expect(verified.email).toBe('e'.repeat(320));
    expect(verified.name).toBe('n'.repeat(199));
    const whole = await verify(await sign({ email: 'e'.repeat(318) + '😀', name: 'n'.repeat(198) + '😀x' }));
    expect(whole.email).toBe('e'.repeat(318) + '😀');
    expect(whole.name).toBe('n'.repeat(198) + '😀');
  });

  test('sub may be 1 to 200 characters', async () => {
    expect((await verify(await sign({ sub: 's'.repeat(200) }))).sub).toBe('s'.repeat(200));
    for (const sub of ['', 's'.repeat(201)]) {
      expect(await refusal(async () => verify(await sign({ sub })))).toBe('Invalid visitor identity token: sub must be 1 to 200 characters');
    }
  });

  test('a token of up to 4096 characters is read; a longer one is refused unread', async () => {
    // The shortest token of at least `length` characters, by the size of a padding claim.
    const atLeast = async (length: number) => {
      for (let pad = 2900; ; pad++) {
        const token = await sign({ pad: 'p'.repeat(pad) });
        if (token.length >= length) return token;
      }
    };
    const longest = await atLeast(4096);
    expect(longest).toHaveLength(4096);
    expect((await verify(longest)).sub).toBe('site-user-1');
    const tooLong = await atLeast(4097);
    expect(await refusal(() => verify(tooLong))).toBe('Invalid visitor identity token');
  });
});

describe('401 for a token that does not verify', () => {
  test('a widget without an identity secret verifies nothing', async () => {
    expect(await refusal(async () => verify(await sign({}), null))).toBe('Invalid visitor identity token: the widget has no identity secret yet');
  });

  test('another secret, another algorithm, without sub or exp, or not a token', async () => {
    for (const token of [
      await sign({}, { secret: `wis_${'o'.repeat(43)}` }),
      await sign({}, { alg: 'HS512' }),
      await sign({ sub: undefined }),
      await sign({ exp: undefined }),
      'eyJhbGciOiJIUzI1NiJ9.e30.c2ln',
      'not a token',
    ]) {
      expect(await refusal(() => verify(token))).toBe('Invalid visitor identity token');
    }
  });

  test('expired beyond the clock tolerance of 60 seconds', async () => {
    expect((await verify(await sign({ exp: NOW - 59 }))).acceptedUntil).toBe(NOW + 1);
    expect(await refusal(async () => verify(await sign({ exp: NOW - 60 })))).toBe('Invalid visitor identity token: expired');
  });

  test('exp more than 24 hours (and the clock tolerance) ahead', async () => {
    expect((await verify(await sign({ exp: NOW + 86_400 + 60 }))).sub).toBe('site-user-1');
    expect(await refusal(async () => verify(await sign({ exp: NOW + 86_400 + 61 })))).toBe('Invalid visitor identity token: exp must be at most 24 hours ahead');
  });

  test('a claim PostgreSQL cannot store (NUL, a lone surrogate) in sub, email or name', async () => {
    for (const claims of [{ sub: 'a\u0000b' }, { email: 'ada\ud800@example.com' }, { name: 'Ada \udc00' }]) {
      expect(await refusal(async () => verify(await sign(claims)))).toMatch(/^Invalid visitor identity token: .+/);
    }
  });

  test('a secret that can no longer be unsealed is our failure, not the visitor\'s', async () => {
    const foreign = createSecrets(Buffer.from('another-master-secret-of-32-bytes-or-more')).seal(SECRET);
    const failure = await verify(await sign({}), foreign).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(Error);
    expect(failure).not.toBeInstanceOf(ApiError);
  });
});

describe("the widget's secret is unsealed once, not per token", () => {
  const counting = () => {
    const counted = { unseals: 0 };
    const wrapped: Secrets = { ...secrets, unseal: (text) => (counted.unseals++, secrets.unseal(text)) };
    return { counted, wrapped };
  };

  test("tokens of the same secret reuse its key, whatever other widgets' tokens came between", async () => {
    const { counted, wrapped } = counting();
    const [one, another] = [secrets.seal(SECRET), secrets.seal(SECRET)];
    await verifyVisitorToken(wrapped, one, await sign({}));
    await verifyVisitorToken(wrapped, another, await sign({}));
    await verifyVisitorToken(wrapped, one, await sign({ sub: 'another-user' }));
    await verifyVisitorToken(wrapped, another, await sign({ sub: 'another-user' }));
    expect(counted.unseals).toBe(2);
  });

  test('kept for a bounded number of secrets: after 2,000 others, a secret is unsealed again', async () => {
    const { counted, wrapped } = counting();
    const first = secrets.seal(SECRET);
    const token = await sign({});
    await verifyVisitorToken(wrapped, first, token);
    for (let other = 0; other < 2000; other++) await verifyVisitorToken(wrapped, secrets.seal(SECRET), token);
    expect(counted.unseals).toBe(2001);
    await verifyVisitorToken(wrapped, first, token);
    expect(counted.unseals).toBe(2002);
  });
});

describe('whom a public request speaks for', () => {
  const widget = (identityVerification: string) => ({ settings: { identityVerification }, identity_secret_sealed: sealed });

  test('off: the browser visitor id, the header ignored', async () => {
    expect(await resolveWidgetVisitor(secrets, widget('off'), 'v_1', 'not a token')).toEqual({ key: 'v_1', verified: null });
    expect(await resolveWidgetVisitor(secrets, widget('off'), null, undefined)).toBeNull();
  });

  test('optional: the verified user when a token is sent (sub:<sub>), else the visitor id', async () => {
    const token = await sign({ email: 'ada@example.com' });
    expect(await resolveWidgetVisitor(secrets, widget('optional'), 'v_1', token)).toEqual({
      key: 'sub:site-user-1',
      verified: { sub: 'site-user-1', email: 'ada@example.com', name: null, acceptedUntil: NOW + 3660 },
    });
    expect(await resolveWidgetVisitor(secrets, widget('optional'), 'v_1', undefined)).toEqual({ key: 'v_1', verified: null });
    expect(await refusal(() => resolveWidgetVisitor(secrets, widget('optional'), 'v_1', 'not a token'))).toBe('Invalid visitor identity token');
  });

  test('required: a token is needed, and names the user whatever the visitor id', async () => {
    expect((await resolveWidgetVisitor(secrets, widget('required'), null, await sign({})))?.key).toBe('sub:site-user-1');
    expect(await refusal(() => resolveWidgetVisitor(secrets, widget('required'), 'v_1', undefined))).toBe(
      'This chat widget requires a visitor identity token (X-Visitor-Identity)',
    );
  });

  test('after the statement, a widget that requires identity refuses a visitor that is not verified', async () => {
    const verified = { key: 'sub:u', verified: { sub: 'u', email: null, name: null, acceptedUntil: NOW } };
    checkWidgetVisitor({ identityVerification: 'required' }, verified);
    checkWidgetVisitor({ identityVerification: 'optional' }, { key: 'v_1', verified: null });
    expect(await refusal(async () => checkWidgetVisitor({ identityVerification: 'required' }, { key: 'v_1', verified: null }))).toBe(
      'This chat widget requires a visitor identity token (X-Visitor-Identity)',
    );
  });
});
