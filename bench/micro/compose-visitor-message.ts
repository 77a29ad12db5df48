// The JavaScript a visitor message costs before PostgreSQL sees it: composing its statement
// (the one message writer, its events, the bot's job, the live notifications) from a session
// read given at once, so only the composition is timed.
//
//   node bench/micro/compose-visitor-message.ts
import { botPartOf, visitorMessageWrite, type VisitorMessage } from '../../server/widgets/sql/store-visitor-message.ts';
const open = { id: 'cs_x', status: 'ChatSessionOpened', last_message_id: 'msg_y', last_direction: 'outbound', repeated_id: null, replied_lately: false };
const contact = { block: { id: 'ct_1', phone_number: null, email: null, first_name: 'Unknown', last_name: 'Unknown' }, isBotActive: true, typing: false, archived: false };
function one(i: number) {
  const visit: VisitorMessage = { accountId: 'usr_1', widgetId: 'wid_1', visitorId: 'visitor00001', contact, body: `hello ${i}`, type: 'text', channel: 'chat_widget', status: 'received', mediaUrl: null, mediaContentType: null, externalId: null, details: { pageUrl: 'https://shop.example/pricing', referrer: null, language: 'en-US', userAgent: 'Mozilla/5.0' }, answers: { greeting: 'Hello', awayMessage: null, handsOff: false }, job: { task: 'chat_widget_message', payload: (m, f) => ({ m, f }) } };
  const bot = botPartOf(visit, open);
  if ('repeatedId' in bot) throw new Error('not a retry');
  return visitorMessageWrite(visit, bot);
}
for (let i = 0; i < 20000; i++) one(i);
for (let round = 0; round < 5; round++) {
  const t = performance.now(); const N = 50000;
  for (let i = 0; i < N; i++) one(i);
  console.log(`${(((performance.now() - t) / N) * 1000).toFixed(1)} µs per message`);
}
