// "A widget's open visitor sockets are checked again when the widget is deleted, its identity
// secret rotated or its identityVerification changed: a socket whose handshake would now be
// refused is closed and hears nothing more. A reply to a deleted widget's visitor is stored
// but pushed nowhere." Real Socket.IO clients against the real HTTPS service: each change
// closes the sockets it must, and a socket that would still be accepted stays and hears the
// reply sent after the one the closed socket must not hear (the sentinel). Then: events
// heard while the check runs wait for it; a change lost with the LISTEN connection is caught
// when it comes back; a change made through one process closes sockets another one holds.
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, expect, test } from 'vitest';
import { runSql, sql } from '../../server/db/sql.ts';
import { notifyConversationSql } from '../../server/realtime/publish-conversation-events.ts';
import { LISTENER_APPLICATION_NAME } from '../../server/realtime/conversation-event-feed.ts';
import { announceWidgetChange } from '../../server/widgets/widget-changes.ts';
import { serviceForFile } from '../helpers/service-for-file.ts';
import { serviceProcesses } from '../helpers/service-processes.ts';
import { openRawTrpcSocket } from '../helpers/trpc-socket.ts';
import type { TestService } from '../helpers/service.ts';
import { visitorWrites } from '../messages/reply-fixtures.ts';
import { eventually } from '../messaging/send-template-fixtures.ts';
import { connectVisitor, createWidgetWithSecret, isMessage, messageEvent, signVisitorToken, type Visitor, type WidgetWithSecret } from './widget-fixtures.ts';

let service: TestService;
serviceForFile({}, (started) => ({ service } = started));

const processes = serviceProcesses();
afterAll(() => processes.stopAll());

const sockets: Visitor[] = [];
afterAll(() => {
  for (const socket of sockets) socket.close();
});

function newVisitorId(): string {
  return `v_${randomUUID().replaceAll('-', '')}`;
}

/** A visitor who wrote once, so the account can reply to its contact (`sub`: the verified site user it was stored as). */
async function visitorOf(widget: WidgetWithSecret, who: { fromId: string; token?: string; sub?: string }): Promise<string> {
  await visitorWrites(service, widget.userId, widget.id, who.fromId, 'hello', who.token);
  const key = who.sub ? `sub:${who.sub}` : who.fromId;
  const { rows } = await service.services.pool.query<{ id: string }>('select id from contacts where chat_widget_id = $1 and widget_visitor_id = $2', [widget.id, key]);
  return rows[0]!.id;
}

type Listening = Visitor & { disconnected: Promise<string> };

async function listen(origin: string, widget: WidgetWithSecret, auth: { visitorId?: string; identityToken?: string }): Promise<Listening> {
  const visitor = await connectVisitor(origin, { configId: widget.id, ...auth });
  sockets.push(visitor);
  return { ...visitor, disconnected: new Promise((resolve) => visitor.socket.once('disconnect', resolve)) };
}

async function reply(widget: WidgetWithSecret, contactId: string, text: string): Promise<void> {
  const sent = await service.request('POST', `/v1/contacts/${contactId}/messages`, { apiKey: widget.apiKey, body: { text } });
  expect(sent.status, sent.text).toBe(201);
}

/** The server closed the socket and told it so (the client does not reconnect on its own). */
async function closedByServer(socket: Listening): Promise<void> {
  expect(await socket.disconnected).toBe('io server disconnect');
}

test('rotating the identity secret closes the sockets verified with the old one; an anonymous visitor of the same widget stays and hears its reply', async () => {
  const widget = await createWidgetWithSecret(service, 'optional');
  const token = await signVisitorToken(widget.secret, { sub: 'user-rotated' });
  const verified = { fromId: newVisitorId(), token, sub: 'user-rotated' };
  const anonymous = { fromId: newVisitorId() };
  const verifiedContact = await visitorOf(widget, verified);
  const anonymousContact = await visitorOf(widget, anonymous);
  const verifiedSocket = await listen(service.origin, widget, { visitorId: verified.fromId, identityToken: token });
  const anonymousSocket = await listen(service.origin, widget, { visitorId: anonymous.fromId });

  const rotated = await service.request('POST', `/chat-widgets/${widget.id}/identity-secret`, { apiKey: widget.apiKey });
  expect(rotated.status).toBe(200);
  // Right after the change: the reply may reach the process before its check of the socket ends.
  await reply(widget, verifiedContact, 'to the verified visitor');
  await reply(widget, anonymousContact, 'to the anonymous visitor');

  await closedByServer(verifiedSocket);
  await anonymousSocket.waitFor(isMessage('to the anonymous visitor'));
  expect(verifiedSocket.heard.filter(isMessage('to the verified visitor'))).toEqual([]);
  expect(anonymousSocket.socket.connected).toBe(true);
  // As HTTP with the same token is refused.
  const poll = await service.request('GET', '/chat-widget-messages', { query: { fromId: verified.fromId, toId: widget.id }, headers: { 'x-visitor-identity': token } });
  expect(poll.status).toBe(401);
});

test.each(['off', 'optional'] as const)(
  'identityVerification %s -> required closes the socket without a token; a socket with a valid token stays and hears its reply',
  async (before) => {
    const widget = await createWidgetWithSecret(service, before);
    const token = await signVisitorToken(widget.secret, { sub: `user-${before}` });
    const anonymous = { fromId: newVisitorId() };
    // With verification off the token is ignored: that visitor is its fromId, and its socket keeps that room.
    const verified = { fromId: newVisitorId(), token, sub: before === 'off' ? undefined : `user-${before}` };
    const anonymousContact = await visitorOf(widget, anonymous);
    const verifiedContact = await visitorOf(widget, verified);
    const anonymousSocket = await listen(service.origin, widget, { visitorId: anonymous.fromId });
    const verifiedSocket = await listen(service.origin, widget, { visitorId: verified.fromId, identityToken: token });

    const updated = await service.request('PUT', `/chat-widgets/${widget.id}`, { apiKey: widget.apiKey, body: { settings: { identityVerification: 'required' } } });
    expect(updated.status, updated.text).toBe(200);
    await reply(widget, anonymousContact, 'to the anonymous visitor');
    await reply(widget, verifiedContact, 'to the verified visitor');

    await closedByServer(anonymousSocket);
    await verifiedSocket.waitFor(isMessage('to the verified visitor'));
    expect(anonymousSocket.heard.filter(isMessage('to the anonymous visitor'))).toEqual([]);
    expect(verifiedSocket.socket.connected).toBe(true);
  },
);

test('identityVerification optional -> off keeps a verified socket that named its visitor id, and closes one that was admitted by its token alone', async () => {
  const widget = await createWidgetWithSecret(service, 'optional');
  const token = await signVisitorToken(widget.secret, { sub: 'user-two-devices' });
  const contact = await visitorOf(widget, { fromId: newVisitorId(), token, sub: 'user-two-devices' });
  // Two devices of one site user, in one room: one sent a visitor id with its token, the other only the token.
  const withVisitorId = await listen(service.origin, widget, { visitorId: newVisitorId(), identityToken: token });
  const tokenOnly = await listen(service.origin, widget, { identityToken: token });

  const updated = await service.request('PUT', `/chat-widgets/${widget.id}`, { apiKey: widget.apiKey, body: { settings: { identityVerification: 'off' } } });
  expect(updated.status, updated.text).toBe(200);
  await reply(widget, contact, 'to both devices');

  await closedByServer(tokenOnly);
  await withVisitorId.waitFor(isMessage('to both devices'));
  expect(tokenOnly.heard.filter(isMessage('to both devices'))).toEqual([]);
  expect(withVisitorId.socket.connected).toBe(true);
});

test("deleting the widget closes its sockets; a reply to its visitor is stored but pushed nowhere, not to the account's subscription either", async () => {
  const deleted = await createWidgetWithSecret(service, 'off');
  const kept = await createWidgetWithSecret(service, 'off', { userId: deleted.userId, apiKey: deleted.apiKey });
  const goneVisitor = { fromId: newVisitorId() };
  const keptVisitor = { fromId: newVisitorId() };
  const goneContact = await visitorOf(deleted, goneVisitor);
  const keptContact = await visitorOf(kept, keptVisitor);
  const goneSocket = await listen(service.origin, deleted, { visitorId: goneVisitor.fromId });
  const keptSocket = await listen(service.origin, kept, { visitorId: keptVisitor.fromId });
  const subscription = await openRawTrpcSocket(service.origin, { apiKey: deleted.apiKey });
  try {
    subscription.send({ id: 1, method: 'subscription', params: { path: 'chatWidgets.onConversationEvent', input: {} } });
    const carries = (text: string) => (frame: { id: unknown; result?: { type: string } }) =>
      frame.id === 1 && frame.result?.type === 'data' && JSON.stringify(frame).includes(text);
    // Once started, the subscription hears what is published.
    await subscription.waitFor((frame: { id: unknown; result?: { type: string } }) => frame.id === 1 && frame.result?.type === 'started');
    await reply(kept, keptContact, 'before the deletion');
    await subscription.waitFor(carries('before the deletion'));

    const response = await service.request('DELETE', `/chat-widgets/${deleted.id}`, { apiKey: deleted.apiKey });
    expect(response.status).toBe(200);
    await reply(deleted, goneContact, 'after the deletion');
    await reply(kept, keptContact, 'the sentinel');

    await closedByServer(goneSocket);
    await keptSocket.waitFor(isMessage('the sentinel'));
    const sentinel = subscription.frames.indexOf(await subscription.waitFor(carries('the sentinel')));
    expect(subscription.frames.slice(0, sentinel).filter(carries('after the deletion'))).toEqual([]);
    expect(goneSocket.heard.filter(isMessage('after the deletion'))).toEqual([]);
    const { rows } = await service.services.pool.query('select direction from messages where contact_id = $1 and body = $2', [goneContact, 'after the deletion']);
    expect(rows).toEqual([{ direction: 'outbound-api' }]);
  } finally {
    await subscription.close();
  }
});

test('events heard while the sockets of a changed widget are being checked wait for the check: the refused socket never hears them, the kept one does', async () => {
  const widget = await createWidgetWithSecret(service, 'optional');
  const marker = await createWidgetWithSecret(service, 'off', { userId: widget.userId, apiKey: widget.apiKey });
  const token = await signVisitorToken(widget.secret, { sub: 'user-held' });
  const anonymousVisitor = newVisitorId();
  const verifiedSocket = await listen(service.origin, widget, { visitorId: newVisitorId(), identityToken: token });
  const anonymousSocket = await listen(service.origin, widget, { visitorId: anonymousVisitor });
  const markerVisitor = newVisitorId();
  const markerSocket = await listen(service.origin, marker, { visitorId: markerVisitor });
  const target = (visitorId: string, configId = widget.id) => ({ accountId: widget.userId, widgetId: configId, visitorId, contactId: 'ct_unused' });
  // Straight to the channel: the account-side publisher would wait for the lock below too.
  const announce = (event: ReturnType<typeof messageEvent>) => runSql(service.services.pool, sql`select ${notifyConversationSql([event])}`);

  // The secret is replaced in a transaction that also keeps the widget's row from being read,
  // so the check the announcement starts waits until it commits.
  const locker = new pg.Client({ connectionString: service.databaseUrl });
  await locker.connect();
  try {
    await locker.query('begin');
    await locker.query('lock table chat_widgets in access exclusive mode');
    await locker.query('update chat_widgets set identity_secret_sealed = $1 where id = $2', [service.services.secrets.seal(`wis_${'r'.repeat(43)}`), widget.id]);
    await service.services.orm.em.fork().transactional((tx) => announceWidgetChange(tx, widget.id));
    // The check's read of the widget is queued behind the lock (whichever statement reads it).
    await eventually(
      async () =>
        (
          await locker.query(
            `select 1 from pg_locks l join pg_class c on c.oid = l.relation
              where c.relname = 'chat_widgets' and l.database = (select oid from pg_database where datname = current_database()) and not l.granted`,
          )
        ).rowCount,
      (waiting) => (waiting ?? 0) >= 1,
    );
    await announce(messageEvent(target('sub:user-held'), 'to the verified visitor'));
    await announce(messageEvent(target(anonymousVisitor), 'to the anonymous visitor'));
    // Heard after those two, on a widget not being checked: once it arrives, they have been heard.
    await announce(messageEvent(target(markerVisitor, marker.id), 'the marker'));
    await markerSocket.waitFor(isMessage('the marker'));
    await locker.query('commit');
  } finally {
    await locker.end();
  }

  await closedByServer(verifiedSocket);
  await anonymousSocket.waitFor(isMessage('to the anonymous visitor'));
  expect(verifiedSocket.heard.filter(isMessage('to the verified visitor'))).toEqual([]);
});

test('a change this process could not hear (its LISTEN connection was down) still closes the socket once it listens again', async () => {
  const widget = await createWidgetWithSecret(service, 'optional');
  const token = await signVisitorToken(widget.secret, { sub: 'user-unheard' });
  const anonymous = { fromId: newVisitorId() };
  const anonymousContact = await visitorOf(widget, anonymous);
  const verifiedSocket = await listen(service.origin, widget, { visitorId: newVisitorId(), identityToken: token });
  const anonymousSocket = await listen(service.origin, widget, { visitorId: anonymous.fromId });

  // Replaced behind the service's back: no announcement at all, as if it had been lost.
  await service.services.pool.query('update chat_widgets set identity_secret_sealed = $1 where id = $2', [service.services.secrets.seal(`wis_${'u'.repeat(43)}`), widget.id]);
  const { rows } = await service.services.pool.query<{ terminated: boolean }>(
    `select pg_terminate_backend(pid) as terminated from pg_stat_activity where application_name = $1 and datname = current_database()`,
    [LISTENER_APPLICATION_NAME],
  );
  expect(rows.map((row) => row.terminated)).toEqual([true]);

  await closedByServer(verifiedSocket);
  await reply(widget, anonymousContact, 'after the reconnection');
  await anonymousSocket.waitFor(isMessage('after the reconnection'));
});

test('a change made through one process closes the socket that another process holds', async () => {
  const other = await processes.spawn({ role: 'api', databaseUrl: service.databaseUrl });
  const widget = await createWidgetWithSecret(service, 'optional');
  const token = await signVisitorToken(widget.secret, { sub: 'user-elsewhere' });
  const verified = { fromId: newVisitorId(), token, sub: 'user-elsewhere' };
  const anonymous = { fromId: newVisitorId() };
  const verifiedContact = await visitorOf(widget, verified);
  const anonymousContact = await visitorOf(widget, anonymous);
  const verifiedSocket = await listen(other.origin, widget, { visitorId: verified.fromId, identityToken: token });
  const anonymousSocket = await listen(other.origin, widget, { visitorId: anonymous.fromId });

  // Through this process; the sockets are held by the other one.
  const rotated = await service.request('POST', `/chat-widgets/${widget.id}/identity-secret`, { apiKey: widget.apiKey });
  expect(rotated.status).toBe(200);
  await reply(widget, verifiedContact, 'to the verified visitor');
  await reply(widget, anonymousContact, 'to the anonymous visitor');

  await closedByServer(verifiedSocket);
  await anonymousSocket.waitFor(isMessage('to the anonymous visitor'));
  expect(verifiedSocket.heard.filter(isMessage('to the verified visitor'))).toEqual([]);
});
