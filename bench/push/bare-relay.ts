// The baseline of the push figure: a bare Socket.IO server on fastify over HTTPS that relays
// a posted message to one visitor's room, doing nothing else (no database, no queue). The
// service does the same with a stored message, a transaction and PostgreSQL LISTEN/NOTIFY.
//
// Environment: PORT, TLS_CERT_FILE, TLS_KEY_FILE. Prints `relay listening on https://...`;
// without the TLS files, plain HTTP (`http://...`): what a socket costs without TLS in the process.
import { readFileSync } from 'node:fs';
import fastify, { type FastifyInstance } from 'fastify';
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

type Envelope = { customData: { body: string; fromId: string; toId: string } };
let sequence = 0;
app.post('/relay', async (request) => {
  const { customData } = request.body as Envelope;
  sequence += 1;
  io.to(`conversation:${customData.toId}:${customData.fromId}`).emit('message', {
    messageSid: `relay_${sequence}`,
    body: customData.body,
    mediaUrl: null,
    mediaContentType: null,
    timestamp: new Date().toISOString(),
    type: 'text',
    direction: 'inbound',
    status: 'received',
  });
  return { success: true, messageId: `relay_${sequence}` };
});

const address = await app.listen({ port: Number(env('PORT')), host: '127.0.0.1' });
console.log(`relay listening on ${tls ? address.replace(/^http:/, 'https:') : address}`);
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.once(signal, () => {
    io.close();
    void app.close().then(() => process.exit(0));
  });
}
