// How a scoped key is shown: never its value, only a masked preview.
import { z } from 'zod';
import type { ApiKey } from '../db/entities/index.ts';

export const ScopedKeyScopes = z.object({
  read_only: z.boolean(),
  tags: z.array(z.string()),
  sub_account_ids: z.array(z.string()),
  rate_limit_per_min: z.number().int(),
});

export const ScopedKeyRecord = z.object({
  id: z.string(),
  label: z.string(),
  key_preview: z.string(),
  scopes: ScopedKeyScopes,
  expires_at: z.string().nullable(),
  last_used_at: z.string().nullable(),
  created_at: z.string(),
  revoked_at: z.string().nullable(),
  revoked: z.boolean(),
});
export type ScopedKeyRecord = z.infer<typeof ScopedKeyRecord>;

export function toScopedKeyRecord(key: ApiKey): ScopedKeyRecord {
  return {
    id: key.id,
    label: key.label ?? '',
    key_preview: key.keyPreview,
    scopes: key.scopes!,
    expires_at: key.expiresAt?.toISOString() ?? null,
    last_used_at: key.lastUsedAt?.toISOString() ?? null,
    created_at: key.createdAt.toISOString(),
    revoked_at: key.revokedAt?.toISOString() ?? null,
    revoked: key.revokedAt != null,
  };
}
