// How a stored summary is shown: `{id, summary, created_at, message_count}`.
import type { Summary } from '../db/entities/index.ts';

export type SummaryRecord = { id: string; summary: string; created_at: string; message_count: number };

export function toSummaryRecord(summary: Summary): SummaryRecord {
  return { id: summary.id, summary: summary.summary, created_at: summary.createdAt.toISOString(), message_count: summary.messageCount };
}
