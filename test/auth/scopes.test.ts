// Authentication rules 4 and 6 as the one scope check decides them: "the main key has full
// access", "a write with a read-only key gives 403 key_read_only", "an endpoint or managed
// account outside its scopes gives 403 key_scope_denied", "anything not clearly allowed is
// refused", and key management needs the main key or an owner session.
import { describe, expect, test } from 'vitest';
import { ApiError } from '../../server/errors.ts';
import {
  assertAccountInScope,
  assertEveryClientInScope,
  assertProcedureAllowed,
  type Credential,
  type Scopes,
} from '../../server/auth/scopes.ts';

const OWN = 'usr_own';

function scoped(scopes: Partial<Scopes>): Credential {
  return {
    type: 'scoped',
    id: 'key_1',
    accountId: OWN,
    scopes: { read_only: true, tags: ['Contacts'], sub_account_ids: [], rate_limit_per_min: 60, ...scopes },
    rateLimitPerMin: 60,
  };
}
const main: Credential = { type: 'main', id: 'key_main', accountId: OWN, scopes: null, rateLimitPerMin: 300 };
const session: Credential = { type: 'session', id: 'oidc|sub', accountId: OWN, scopes: null, rateLimitPerMin: 300 };

function refusal(run: () => void): { status: number; code: string | undefined; message: string } {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(ApiError);
    const apiError = error as ApiError;
    return { status: apiError.status, code: apiError.code, message: apiError.message };
  }
  throw new Error('expected a refusal');
}

describe('assertProcedureAllowed', () => {
  test('the main key and an owner session may call anything, writes and key management included', () => {
    for (const credential of [main, session]) {
      expect(() => assertProcedureAllowed(credential, { section: 'Contacts', access: 'write' })).not.toThrow();
      expect(() => assertProcedureAllowed(credential, { section: 'API Keys', access: 'write', requires: 'owner' })).not.toThrow();
    }
  });

  test('a procedure without access meta is refused to everyone (default deny)', () => {
    for (const credential of [main, session, scoped({})]) {
      expect(refusal(() => assertProcedureAllowed(credential, undefined))).toEqual({
        status: 403,
        code: 'key_scope_denied',
        message: 'This operation is not available to API keys',
      });
    }
  });

  test('a scoped key reads in its sections', () => {
    expect(() => assertProcedureAllowed(scoped({ tags: ['Contacts', 'Tags'] }), { section: 'Tags', access: 'read' })).not.toThrow();
  });

  test('a section outside the key is key_scope_denied and names the section', () => {
    expect(refusal(() => assertProcedureAllowed(scoped({ tags: ['Contacts'] }), { section: 'Webhooks', access: 'read' }))).toEqual({
      status: 403,
      code: 'key_scope_denied',
      message: 'This API key is not allowed to use the Webhooks section',
    });
  });

  test('an empty section list means every section', () => {
    expect(() => assertProcedureAllowed(scoped({ tags: [] }), { section: 'Webhooks', access: 'read' })).not.toThrow();
  });

  test('a read-only key may not write: key_read_only; a writable key may', () => {
    expect(refusal(() => assertProcedureAllowed(scoped({}), { section: 'Contacts', access: 'write' }))).toEqual({
      status: 403,
      code: 'key_read_only',
      message: 'This API key is read-only',
    });
    expect(() => assertProcedureAllowed(scoped({ read_only: false }), { section: 'Contacts', access: 'write' })).not.toThrow();
  });

  test('the section is checked before the read-only flag', () => {
    expect(refusal(() => assertProcedureAllowed(scoped({ tags: ['Tags'] }), { section: 'Contacts', access: 'write' })).code).toBe('key_scope_denied');
  });

  test('a scoped key never manages keys, whatever its sections: key_scope_denied', () => {
    const everything = scoped({ tags: [], read_only: false });
    const expected = { status: 403, code: 'key_scope_denied', message: 'Managing API keys requires the main API key or an owner session' };
    expect(refusal(() => assertProcedureAllowed(everything, { section: 'API Keys', access: 'read' }))).toEqual(expected);
    expect(refusal(() => assertProcedureAllowed(everything, { section: 'Contacts', access: 'read', requires: 'owner' }))).toEqual(expected);
    expect(refusal(() => assertProcedureAllowed({ ...everything, scopes: null }, { section: 'Contacts', access: 'read' }))).toEqual(expected);
  });
});

describe('assertAccountInScope', () => {
  const denied = { status: 403, code: 'key_scope_denied', message: 'This API key is not allowed to act on that account' };

  test('every key acts on its own account; main keys and sessions on any (ownership is checked elsewhere)', () => {
    expect(() => assertAccountInScope(scoped({}), OWN)).not.toThrow();
    expect(() => assertAccountInScope(main, 'usr_client')).not.toThrow();
    expect(() => assertAccountInScope(session, 'usr_client')).not.toThrow();
  });

  test('a scoped key acts on another account only when sub_account_ids lists it or is ["*"]', () => {
    expect(refusal(() => assertAccountInScope(scoped({}), 'usr_client'))).toEqual(denied);
    expect(refusal(() => assertAccountInScope(scoped({ sub_account_ids: ['usr_other'] }), 'usr_client'))).toEqual(denied);
    expect(() => assertAccountInScope(scoped({ sub_account_ids: ['usr_other', 'usr_client'] }), 'usr_client')).not.toThrow();
    expect(() => assertAccountInScope(scoped({ sub_account_ids: ['*'] }), 'usr_client')).not.toThrow();
  });

  test('a scoped key without scopes acts on its own account only', () => {
    const bare: Credential = { ...scoped({}), scopes: null };
    expect(() => assertAccountInScope(bare, OWN)).not.toThrow();
    expect(refusal(() => assertAccountInScope(bare, 'usr_client'))).toEqual(denied);
    expect(refusal(() => assertEveryClientInScope(bare)).code).toBe('key_scope_denied');
  });
});

describe('assertEveryClientInScope', () => {
  test('only ["*"] covers every client account; main keys and sessions always do', () => {
    expect(() => assertEveryClientInScope(main)).not.toThrow();
    expect(() => assertEveryClientInScope(session)).not.toThrow();
    expect(() => assertEveryClientInScope(scoped({ sub_account_ids: ['*'] }))).not.toThrow();
    expect(refusal(() => assertEveryClientInScope(scoped({ sub_account_ids: ['usr_client'] })))).toEqual({
      status: 403,
      code: 'key_scope_denied',
      message: 'This API key is not allowed to act on every client account; that needs sub_account_ids ["*"]',
    });
    expect(refusal(() => assertEveryClientInScope(scoped({}))).code).toBe('key_scope_denied');
  });
});
