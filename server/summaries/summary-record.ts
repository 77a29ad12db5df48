// How a stored summary is shown: `{id, summary, created_at, message_count}`.
import { z } from 'zod';
import type { Summary } from '../db/entities/index.ts';

export const SummaryRecord = z.object({ id: z.string(), summary: z.string(), created_at: z.string(), message_count: z.number().int() });
export type SummaryRecord = z.infer<typeof SummaryRecord>;

export function toSummaryRecord(summary: Summary): SummaryRecord {
  return { id: summary.id, summary: summary.summary, created_at: summary.createdAt.toISOString(), message_count: summary.messageCount };
}
