// How a broadcast is shown: its progress counters beside its timestamps.
import { z } from 'zod';
import type { Broadcast } from '../db/entities/index.ts';

export const BroadcastRecord = z.object({
  id: z.string(),
  list_id: z.string(),
  whatsapp_template_id: z.string(),
  status: z.enum(['queued', 'running', 'completed', 'failed']),
  total: z.number().int(),
  sent: z.number().int(),
  failed: z.number().int(),
  skipped: z.number().int(),
  error: z.string().nullable().describe('Why the broadcast stopped before its last recipient (credits ran out, say)'),
  created_at: z.string(),
  started_at: z.string().nullable(),
  completed_at: z.string().nullable(),
});
export type BroadcastRecord = z.infer<typeof BroadcastRecord>;

export function toBroadcastRecord(broadcast: Broadcast): BroadcastRecord {
  return {
    id: broadcast.id,
    list_id: broadcast.listId,
    whatsapp_template_id: broadcast.templateId,
    status: broadcast.status,
    total: broadcast.total,
    sent: broadcast.sent,
    failed: broadcast.failed,
    skipped: broadcast.skipped,
    error: broadcast.error ?? null,
    created_at: broadcast.createdAt.toISOString(),
    started_at: broadcast.startedAt ? broadcast.startedAt.toISOString() : null,
    completed_at: broadcast.completedAt ? broadcast.completedAt.toISOString() : null,
  };
}
