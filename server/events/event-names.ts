// The transactional outbox's event names: what webhooks subscribe to and every event is called.

export const EVENT_NAMES = [
  'Contact Created',
  'Human Alerted',
  'Appointment Booked',
  'Replies',
  'Reads',
  'Deliveries',
  'Credits Spent',
  'Credits Recharged',
  'Low Credit Balance',
  'Contact Paused',
  'Contact Do Not Disturb',
  'Contact Unarchived',
  'New Message',
  'Contact Resumed',
  'Chat Concluded',
  'Task Created',
  'Task Updated',
  'Task Completed',
  'Daily Summary Created',
  'Channel Connected',
  'Broadcast Started',
  'Broadcast Completed',
] as const;
export type EventName = (typeof EVENT_NAMES)[number];
