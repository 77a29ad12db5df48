// The rules for a task's fields, shared by creating and changing one.
import { z } from 'zod';
import { columnDateTime, NON_BLANK_TEXT_PATTERN } from '../input-rules.ts';

export const TASK_STATUSES = ['open', 'done'] as const;

export const TaskTitle = z.string().trim().min(1, 'must not be empty').max(500, 'must be at most 500 characters').meta({ pattern: NON_BLANK_TEXT_PATTERN });
// `null` detaches the contact / clears the due date.
export const TaskContactId = z.string().min(1, 'must not be empty').nullable().optional();
export const TaskDueAt = columnDateTime('must be an ISO 8601 date-time with a time zone, between the years 0001 and 9999').nullable().optional();
export const TaskStatus = z.enum(TASK_STATUSES, { error: 'must be open or done' });
