// What the realtime tests share: a chat widget row, publishing an event the way a domain
// function does (inside a transaction), and a visitor's Socket.IO client that records what
// it hears.
import { SignJWT } from 'jose';
import { io, type Socket } from 'socket.io-client';
import { expect } from 'vitest';
import { newId } from '../../server/db/ids.ts';
import { publishConversationEvent } from '../../server/realtime/publish-conversation-events.ts';
import type { ConversationEvent } from '../../server/realtime/conversation-event.ts';
import type { ConversationMessage } from '../../server/widgets/conversation-message.ts';
import type { TestService } from '../helpers/service.ts';

export async function insertWidget(service: TestService, accountId: string, settings: Record<string, unknown> = {}): Promise<string> {
  const id = newId('cw');
  await service.services.pool.query(
    `insert into chat_widgets (id, account_id, name, settings, otp_secret_sealed) values ($1, $2, 'Test widget', $3, $4)`,
    [id, accountId, JSON.stringify(settings), service.services.secrets.seal('x')],
  );
  return id;
}

/** A widget made through the API, with its identity secret (answered once by POST /chat-widgets/{configId}/identity-secret). */
export type WidgetWithSecret = { id: string; userId: string; apiKey: string; secret: string };

/** A widget with `identityVerification`, of a new account unless one is given. */
export async function createWidgetWithSecret(
  service: TestService,
  identityVerification: 'off' | 'optional' | 'required',
  account?: { userId: string; apiKey: string },
): Promise<WidgetWithSecret> {
  const { apiKey, userId } = account ?? (await service.createAccount());
  const created = await service.request('POST', '/chat-widgets', { apiKey, body: { name: 'Site', settings: { identityVerification } } });
  expect(created.status, created.text).toBe(201);
  const issued = await service.request('POST', `/chat-widgets/${created.body.data.id}/identity-secret`, { apiKey });
  expect(issued.status, issued.text).toBe(200);
  return { id: created.body.data.id, userId, apiKey, secret: issued.body.data.identity_secret };
}

/** What a site's back end does: an HS256 JWT keyed by the secret's UTF-8 bytes (`expiresIn` seconds, null: no exp). */
export async function signVisitorToken(secret: string, claims: Record<string, unknown>, expiresIn: number | null = 3600): Promise<string> {
  const jwt = new SignJWT(claims).setProtectedHeader({ alg: 'HS256' }).setIssuedAt();
  if (expiresIn !== null) jwt.setExpirationTime(Math.floor(Date.now() / 1000) + expiresIn);
  return jwt.sign(new TextEncoder().encode(secret));
}

let messageCounter = 0;
export function conversationMessage(body: string): ConversationMessage {
  messageCounter += 1;
  return {
    messageSid: `msg_test${messageCounter}_${process.pid}`,
    body,
    mediaUrl: null,
    mediaContentType: null,
    timestamp: new Date().toISOString(),
    type: 'text',
    direction: 'outbound',
    status: 'sent',
    sender_name: null,
  };
}

export type Target = { accountId: string; widgetId: string; visitorId: string; contactId: string };

export function messageEvent(target: Target, body: string): ConversationEvent & { kind: 'message' } {
  return { ...target, kind: 'message', message: conversationMessage(body) };
}

/** Publishes on a committed transaction, as a domain function storing a change would. */
export async function publish(service: TestService, event: ConversationEvent): Promise<void> {
  await service.services.orm.em.fork().transactional((tx) => publishConversationEvent(tx, event));
}

export type Heard = { name: string; payload: unknown };

export type Visitor = {
  socket: Socket;
  heard: Heard[];
  /** Resolves with everything heard up to and including the first event that matches. */
  waitFor(predicate: (heard: Heard) => boolean): Promise<Heard[]>;
  close(): void;
};

/** A visitor's client, connected (or refused: the promise rejects with the handshake error). */
export function connectVisitor(
  origin: string,
  auth: Record<string, unknown>,
  options: { transports?: ('websocket' | 'polling')[]; extraHeaders?: Record<string, string> } = {},
): Promise<Visitor> {
  const socket = io(origin, {
    path: '/socket.io',
    auth,
    transports: options.transports ?? ['websocket'],
    extraHeaders: options.extraHeaders,
    rejectUnauthorized: false,
    reconnectionDelay: 50,
    reconnectionDelayMax: 200,
  });
  const heard: Heard[] = [];
  const waiters: { predicate: (heard: Heard) => boolean; resolve: (heard: Heard[]) => void }[] = [];
  socket.onAny((name: string, payload: unknown) => {
    const entry = { name, payload };
    heard.push(entry);
    for (const waiter of [...waiters]) {
      if (waiter.predicate(entry)) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve([...heard]);
      }
    }
  });
  const visitor: Visitor = {
    socket,
    heard,
    waitFor(predicate) {
      const index = heard.findIndex(predicate);
      if (index !== -1) return Promise.resolve(heard.slice(0, index + 1));
      return new Promise((resolve) => waiters.push({ predicate, resolve }));
    },
    close: () => socket.close(),
  };
  return new Promise((resolve, reject) => {
    // Only the first handshake decides; a failed reconnect attempt later must not close it.
    const refused = (error: Error) => {
      socket.close();
      reject(error);
    };
    socket.once('connect', () => {
      socket.off('connect_error', refused);
      resolve(visitor);
    });
    socket.once('connect_error', refused);
  });
}

export function isMessage(body: string) {
  return (heard: Heard) => heard.name === 'message' && (heard.payload as ConversationMessage).body === body;
}

/**
 * What `visitor` heard after its first `from` events, up to an event published now: the
 * gateway pushes announcements in commit order, so whatever a transaction committed before
 * this call announced has been heard by then. The way to show that something was not pushed.
 */
export async function heardUntilNow(service: TestService, target: Target, visitor: Visitor, from = 0): Promise<Heard[]> {
  messageCounter += 1;
  const sentinel = `sentinel ${messageCounter} ${process.pid}`;
  await publish(service, messageEvent(target, sentinel));
  return (await visitor.waitFor(isMessage(sentinel))).slice(from, -1);
}
