// The baseline of the push figure: a bare Socket.IO server on fastify over HTTPS that relays
// a posted message to one visitor's room, doing nothing else. With DATABASE_URL it is
// durable: it first inserts the message as a row like the service's (a table made `like
// messages`, so the same columns and indexes, without the foreign keys) in one statement,
// committed, and emits once that is done; no authentication, no counting, no session. The
// service does the same with its transaction and PostgreSQL LISTEN/NOTIFY.
//
// Environment: PORT, TLS_CERT_FILE, TLS_KEY_FILE, DATABASE_URL and RELAY_POOL_SIZE (10). Prints
// `relay listening on https://...`; without the TLS files, plain HTTP (`http://...`): what a
// socket costs without TLS in the process.
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import fastify, { type FastifyInstance } from 'fastify';
import pg from 'pg';
import { Server } from 'socket.io';

const env = (name: string) => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is required`);
  return value;
};

const tls = process.env.TLS_KEY_FILE ? { key: readFileSync(env('TLS_KEY_FILE')), cert: readFileSync(env('TLS_CERT_FILE')) } : null;
// One type for both: the relay uses nothing of the server that differs between them.
const app = (tls ? fastify({ https: tls, logger: false }) : fastify({ logger: false })) as unknown as FastifyInstance;
const io = new Server(app.server, { path: '/socket.io', serveClient: false });
io.use((socket, next) => {
  const { configId, visitorId } = socket.handshake.auth as { configId?: string; visitorId?: string };
  if (!configId || !visitorId) return next(new Error('configId and visitorId are required'));
  void socket.join(`conversation:${configId}:${visitorId}`);
  next();
});

// As many connections as the service's pool (its DATABASE_POOL_SIZE default unless told).
const pool = process.env.DATABASE_URL ? new pg.Pool({ connectionString: process.env.DATABASE_URL, max: Number(process.env.RELAY_POOL_SIZE) || 10 }) : null;
await pool?.query('create table if not exists bench_relay_messages (like messages including all)');

type Envelope = { customData: { body: string; fromId: string; toId: string } };
app.post('/relay', async (request) => {
  const { customData } = request.body as Envelope;
  const ownerId = (request.query as Record<string, string | undefined>).userId ?? 'relay';
  const messageSid = `msg_${randomUUID()}`;
  const createdAt = new Date();
  await pool?.query({
    name: 'relay-insert-message',
    text: `insert into bench_relay_messages (id, account_id, contact_id, session_id, direction, body, type, channel, status, sender, sender_name,
                      media_url, media_content_type, external_id, provider_message_id, template_id, read_at, created_at)
  values ($1, $2, $3, null, 'inbound', $4, 'text', 'chat_widget', 'received', 'contact', null, null, null, null, null, null, null, $5)`,
    values: [messageSid, ownerId, `${customData.toId}:${customData.fromId}`, customData.body, createdAt.toISOString()],
  });
  io.to(`conversation:${customData.toId}:${customData.fromId}`).emit('message', {
    messageSid,
    body: customData.body,
    mediaUrl: null,
    mediaContentType: null,
    timestamp: createdAt.toISOString(),
    type: 'text',
    direction: 'inbound',
    status: 'received',
  });
  return { success: true, messageId: messageSid };
});

const address = await app.listen({ port: Number(env('PORT')), host: '127.0.0.1' });
console.log(`relay listening on ${tls ? address.replace(/^http:/, 'https:') : address}`);
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.once(signal, () => {
    io.close();
    void app
      .close()
      .then(() => pool?.end())
      .then(() => process.exit(0));
  });
}
