// The entities keep `id` as the primary key the ORM tracks; in the database the account-owned
// tables are keyed by (id, account_id) and their foreign keys between one another include
// account_id (server/db/migrations/Migration20261125150000_shard_by_account.ts), which the
// entities do not spell out: write such schema changes by hand, not from an entity diff.
import { AccountSchema } from './account.ts';
import { AppointmentSchema } from './appointment.ts';
import { MessagingConnectionSchema } from './messaging-connection.ts';
import { MessageTemplateSchema } from './message-template.ts';
import { BroadcastRecipientSchema } from './broadcast-recipient.ts';
import { BroadcastSchema } from './broadcast.ts';
import { ApiKeySchema } from './api-key.ts';
import { ChatSessionSchema } from './chat-session.ts';
import { ChatWidgetSchema } from './chat-widget.ts';
import { ContactListSchema } from './contact-list.ts';
import { ContactTagSchema } from './contact-tag.ts';
import { ContactWidgetDetailsSchema } from './contact-widget-details.ts';
import { ContactSchema } from './contact.ts';
import { EventSchema } from './event.ts';
import { ListSchema } from './list.ts';
import { MessageSchema } from './message.ts';
import { RateCounterSchema } from './rate-counter.ts';
import { SettingSchema } from './setting.ts';
import { SummarySchema } from './summary.ts';
import { TagSchema } from './tag.ts';
import { TaskSchema } from './task.ts';
import { WebhookAttemptSchema } from './webhook-attempt.ts';
import { WebhookAttemptTallySchema } from './webhook-attempt-tally.ts';
import { WebhookDeliverySchema } from './webhook-delivery.ts';
import { WebhookHealthSchema } from './webhook-health.ts';
import { WebhookSubscriptionSchema } from './webhook-subscription.ts';

// Each entity is a class (usable as value and as type) registered on its schema.
export { Account, AccountSchema } from './account.ts';
export { Appointment, AppointmentSchema } from './appointment.ts';
export { MessagingConnection, MessagingConnectionSchema } from './messaging-connection.ts';
export { MessageTemplate, MessageTemplateSchema } from './message-template.ts';
export { BroadcastRecipient, BroadcastRecipientSchema } from './broadcast-recipient.ts';
export { Broadcast, BroadcastSchema } from './broadcast.ts';
export { ApiKey, ApiKeySchema } from './api-key.ts';
export { ChatSession, ChatSessionSchema } from './chat-session.ts';
export { ChatWidget, ChatWidgetSchema } from './chat-widget.ts';
export { Contact, ContactSchema } from './contact.ts';
export { ContactList, ContactListSchema } from './contact-list.ts';
export { ContactTag, ContactTagSchema } from './contact-tag.ts';
export { ContactWidgetDetails, ContactWidgetDetailsSchema } from './contact-widget-details.ts';
export { Event, EventSchema } from './event.ts';
export { List, ListSchema } from './list.ts';
export { Message, MessageSchema } from './message.ts';
export { RateCounter, RateCounterSchema } from './rate-counter.ts';
export { Setting, SettingSchema } from './setting.ts';
export { Summary, SummarySchema } from './summary.ts';
export { Tag, TagSchema } from './tag.ts';
export { Task, TaskSchema } from './task.ts';
export { WebhookAttempt, WebhookAttemptSchema } from './webhook-attempt.ts';
export { WebhookAttemptTally, WebhookAttemptTallySchema } from './webhook-attempt-tally.ts';
export { WebhookDelivery, WebhookDeliverySchema } from './webhook-delivery.ts';
export { WebhookHealth, WebhookHealthSchema } from './webhook-health.ts';
export { WebhookSubscription, WebhookSubscriptionSchema } from './webhook-subscription.ts';

export const entities = [
  AccountSchema,
  ApiKeySchema,
  RateCounterSchema,
  ListSchema,
  ContactSchema,
  ContactListSchema,
  TagSchema,
  ContactTagSchema,
  ContactWidgetDetailsSchema,
  ChatSessionSchema,
  MessageSchema,
  SummarySchema,
  TaskSchema,
  EventSchema,
  SettingSchema,
  WebhookSubscriptionSchema,
  WebhookHealthSchema,
  WebhookDeliverySchema,
  WebhookAttemptSchema,
  WebhookAttemptTallySchema,
  MessagingConnectionSchema,
  MessageTemplateSchema,
  BroadcastSchema,
  BroadcastRecipientSchema,
  ChatWidgetSchema,
  AppointmentSchema,
];
