// How a broadcast is shown: its progress counters beside its timestamps.
import type { Broadcast } from '../db/entities/index.ts';

export type BroadcastRecord = {
  id: string;
  list_id: string;
  whatsapp_template_id: string;
  status: 'queued' | 'running' | 'completed' | 'failed';
  total: number;
  sent: number;
  failed: number;
  skipped: number;
  /** Why the broadcast stopped before its last recipient (credits ran out, say); null otherwise. */
  error: string | null;
  created_at: string;
  started_at: string | null;
  completed_at: string | null;
};

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
