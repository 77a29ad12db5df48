// POST /update-message-read-status on a conversation with hundreds of unread replies: all of
// them become read in one call (their ids are more than one live notification holds).
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, expect, test } from 'vitest';
import type { ConversationEvent } from '../../server/realtime/conversation-event.ts';
import { startTestService, type TestService } from '../helpers/service.ts';

let service: TestService;
beforeAll(async () => {
  service = await startTestService();
});
afterAll(async () => {
  await service?.stop();
});

test('every unread outbound message is marked read, named in one Reads event and in live read events', async () => {
  const { apiKey, userId } = await service.createAccount();
  const widget = await service.request('POST', '/chat-widgets', { apiKey, body: { name: 'Site', settings: {} } });
  expect(widget.status).toBe(201);
  const toId = widget.body.data.id;
  const fromId = `v_${randomUUID().replaceAll('-', '')}`;
  const sent = await service.request('POST', '/incoming-chat-widget-message', {
    query: { userId },
    body: { customData: { body: 'hello', fromId, toId }, messageType: 'text' },
  });
  expect(sent.status).toBe(200);
  // The bot's greeting first, so nothing is written while the call runs.
  const deadline = Date.now() + 20_000;
  for (;;) {
    const conversation = await service.request('GET', '/chat-widget-messages', { query: { fromId, toId } });
    if (conversation.body.messages?.length === 2 && !conversation.body.isBotTyping) break;
    if (Date.now() > deadline) throw new Error(`the bot never answered: ${conversation.text}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const { rows: [{ contact_id: contactId }] } = await service.services.pool.query('select contact_id from messages where id = $1', [sent.body.messageId]);
  // 300 replies the visitor has not read yet, written in one statement.
  const { rows: replies } = await service.services.pool.query<{ id: string }>(
    `insert into messages (id, account_id, contact_id, direction, body, channel, status)
     select 'msg_reply_' || $2 || '_' || lpad(n::text, 4, '0'), $1, $2, 'outbound', 'reply ' || n, 'chat_widget', 'sent'
       from generate_series(1, 300) as n
     returning id`,
    [userId, contactId],
  );
  const replyIds = replies.map((row) => row.id).sort();
  const heard: string[] = [];
  const unsubscribe = service.services.conversationEvents.subscribe((event: ConversationEvent) => {
    if (event.kind === 'read' && event.contactId === contactId) heard.push(...event.messageSids);
  });
  try {
    const marked = await service.request('POST', '/update-message-read-status', { body: { fromId, toId } });
    expect(marked.status, marked.text).toBe(200);
    expect(marked.body).toEqual({ success: true });

    const { rows: unread } = await service.services.pool.query(`select id from messages where contact_id = $1 and direction <> 'inbound' and read_at is null`, [contactId]);
    expect(unread).toEqual([]);
    const { rows: reads } = await service.services.pool.query<{ payload: any }>(`select payload from events where account_id = $1 and name = 'Reads'`, [userId]);
    expect(reads).toHaveLength(1);
    const readIds: string[] = reads[0]!.payload.data.message_ids;
    expect(readIds).toHaveLength(replyIds.length + 1);
    expect(readIds).toEqual(expect.arrayContaining(replyIds));

    const heardBy = Date.now() + 20_000;
    while (heard.length < readIds.length && Date.now() < heardBy) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(heard).toEqual(readIds);
  } finally {
    unsubscribe();
  }
});
