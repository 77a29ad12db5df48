import { defineEntity, p } from '@mikro-orm/core';
import { Account } from './account.ts';
import { Contact } from './contact.ts';

export const ChatSessionSchema = defineEntity({
  name: 'ChatSession',
  tableName: 'chat_sessions',
  properties: {
    id: p.text().primary(),
    account: () => p.manyToOne(Account).ref().deleteRule('cascade').index(false),
    contact: () => p.manyToOne(Contact).ref().deleteRule('cascade').index(false),
    status: p.enum(['ChatSessionOpened', 'ChatSessionClosed'] as const),
    tag: p.text().nullable(),
    startedAt: p.datetime().defaultRaw('now()'),
    endedAt: p.datetime().nullable(),
    /** When a hand-off alerted a person (Human Alerted); at most once per session. */
    humanAlertedAt: p.datetime().nullable(),
    /** Its last message's time (its start before any): recent sessions are listed by it. */
    lastActivityAt: p.datetime().defaultRaw('now()'),
    /** Its last message (by time), which the one writer of messages keeps: a contact's reply answers it. */
    lastMessageId: p.text().nullable(),
    lastMessageDirection: p.text().nullable(),
  },
  indexes: [
    { properties: ['contact', 'startedAt'], name: 'chat_sessions_contact_id_started_at_index' },
    // Recent sessions are paged by newest activity within an account (scanned backwards).
    { properties: ['account', 'lastActivityAt', 'id'], name: 'chat_sessions_account_id_last_activity_at_id_index' },
  ],
  uniques: [
    // A contact has at most one open session; messages go into it.
    { properties: ['contact', 'account'], name: 'chat_sessions_one_open_per_contact', where: "status = 'ChatSessionOpened'" },
  ],
});

export class ChatSession extends ChatSessionSchema.class {}
ChatSessionSchema.setClass(ChatSession);
