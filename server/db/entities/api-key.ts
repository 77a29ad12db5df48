import { defineEntity, p } from '@mikro-orm/core';
import type { Scopes } from '../../auth/scopes.ts';
import { Account } from './account.ts';

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
    scopes: p.json<Scopes>().nullable(),
    expiresAt: p.datetime().nullable(),
    revokedAt: p.datetime().nullable(),
    lastUsedAt: p.datetime().nullable(),
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
