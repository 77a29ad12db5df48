// Visitors connected to the widget when their API process is killed (SIGKILL): their
// Socket.IO clients reconnect to the restarted process by themselves, and fetching with
// `after` (what the widget page does on every reconnect) returns what was stored while they
// were away, through another process, so no message is missed; later ones are pushed live.
import { rm } from 'node:fs/promises';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { startTestService, type TestService } from '../helpers/service.ts';
import { connectVisitor, isMessage, type Visitor } from '../realtime/widget-fixtures.ts';
import { call, killHard, startChildService, stopChildService, waitFor, type ChildService } from './fixtures.ts';

let other: TestService;
let first: ChildService | undefined;
let restarted: ChildService | undefined;
const visitors: Visitor[] = [];

beforeAll(async () => {
  // The process that keeps serving while the visitors' own process is down.
  other = await startTestService();
});
afterAll(async () => {
  for (const visitor of visitors) visitor.close();
  await stopChildService(restarted);
  if (first) await rm(first.dataDir, { recursive: true, force: true });
  await other?.stop();
});

type Conversation = { messages: { messageSid: string; body: string; timestamp: string }[] };

test('visitors connected to a killed process reconnect to its restart and miss no message', async () => {
  const account = await other.createAccount();
  const created = await other.request('POST', '/v1/chat-widgets', { apiKey: account.apiKey, body: { name: 'Support', settings: { greeting: 'Hello there' } } });
  expect(created.status, created.text).toBe(201);
  const widgetId: string = created.body.data.id;
  const visitorIds = ['visitor-restart-a', 'visitor-restart-b'];
  const post = (origin: string, visitorId: string, body: string) =>
    call(origin, 'POST', `/v1/incoming-chat-widget-message?userId=${account.userId}`, { body: { messageType: 'text', customData: { body, fromId: visitorId, toId: widgetId } } });

  first = await startChildService(other.databaseUrl, { ROLE: 'api' });
  const port = String(first.port);
  for (const visitorId of visitorIds) {
    const visitor = await connectVisitor(first.origin, { configId: widgetId, visitorId });
    visitors.push(visitor);
    expect((await post(first.origin, visitorId, `hello from ${visitorId}`)).status).toBe(200);
    await visitor.waitFor(isMessage(`hello from ${visitorId}`));
  }
  const seen = await Promise.all(
    visitorIds.map(async (visitorId) => {
      const page = await call(first!.origin, 'GET', `/v1/chat-widget-messages?fromId=${visitorId}&toId=${widgetId}`);
      return Math.max(...(page.body as Conversation).messages.map((message) => Date.parse(message.timestamp)));
    }),
  );

  await killHard(first.child);
  // While it is down, messages for both visitors are stored through the other process.
  for (const visitorId of visitorIds) expect((await post(other.origin, visitorId, `while away ${visitorId}`)).status).toBe(200);

  // The same port and DATA_DIR: what a supervisor restarting the process does (the start is
  // retried while another process holds the port it had, as a supervisor's would be).
  restarted = await startChildService(other.databaseUrl, { ROLE: 'api', PORT: port }, first.dataDir);
  first = undefined;
  for (const [index, visitorId] of visitorIds.entries()) {
    const visitor = visitors[index]!;
    await waitFor(async () => (visitor.socket.connected ? true : undefined), `${visitorId} reconnected`);
    // The page's catch-up after a reconnect: everything strictly after the newest it had.
    const missed = await call(restarted.origin, 'GET', `/v1/chat-widget-messages?fromId=${visitorId}&toId=${widgetId}&after=${seen[index]}`);
    expect(missed.status, missed.text).toBe(200);
    expect((missed.body as Conversation).messages.map((message) => message.body)).toContain(`while away ${visitorId}`);
  }

  // And pushes reach them live again, from whichever process stores the message.
  for (const [index, visitorId] of visitorIds.entries()) {
    expect((await post(other.origin, visitorId, `after restart ${visitorId}`)).status).toBe(200);
    await visitors[index]!.waitFor(isMessage(`after restart ${visitorId}`));
  }
});
