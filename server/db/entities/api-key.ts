import { defineEntity, p } from '@mikro-orm/core';
import { Account } from './account.ts';

/** A scoped key's permission set as stored; server/auth/scopes.ts gives it meaning. */
export type ApiKeyScopes = {
  read_only: boolean;
  /** Sections the key may use; empty means every section. */
  tags: string[];
  /** Accounts the key may act on besides its own; `['*']` = every managed account. */
  sub_account_ids: string[];
  rate_limit_per_min: number;
};

export const ApiKeySchema = defineEntity({
  name: 'ApiKey',
  tableName: 'api_keys',
  properties: {
    id: p.text().primary(),
    account: () => p.manyToOne(Account).ref().deleteRule('cascade').index(false),
    kind: p.enum(['main', 'scoped'] as const),
    keyHash: p.blob().unique('api_keys_key_hash_unique'),
    keyCiphertext: p.text().nullable(),
    keyPreview: p.text(),
    label: p.text().nullable(),
    // Scoped keys only; null on the main key.
    scopes: p.json<ApiKeyScopes>().nullable(),
    expiresAt: p.datetime().nullable(),
    revokedAt: p.datetime().nullable(),
    lastUsedAt: p.datetime().nullable(),
    // Raised by every announced credential change of the account (server/auth/credential-changes.ts).
    credentialVersion: p.integer().default(0),
    createdAt: p.datetime().defaultRaw('now()'),
  },
  indexes: [{ properties: ['account', 'id'], name: 'api_keys_account_id_id_index' }],
  uniques: [
    // An account has at most one main key; scoped keys are unlimited.
    { properties: ['account'], name: 'api_keys_one_main_per_account', where: "kind = 'main'" },
  ],
});

export class ApiKey extends ApiKeySchema.class {}
ApiKeySchema.setClass(ApiKey);
