// The baselines the benchmark compares the service with: bare fastify over HTTPS with `pg` on
// the same database, authenticating as BARE_MODE says (`counting`, `two-reads`,
// `silent-writes`; docs/performance.md, What each scenario measures).
// Environment: DATABASE_URL, PORT, SECRET_KEY, TLS_CERT_FILE, TLS_KEY_FILE, BARE_MODE. Prints
// `bare listening on https://127.0.0.1:PORT` once it accepts requests.
import { readFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import fastify from 'fastify';
import pg from 'pg';
import { unarchiveOnInbound } from '../server/contacts/archive-contact.ts';
import { sql } from '../server/db/sql.ts';
import { writeMessage } from '../server/messages/sql/insert-message.ts';
import { PLANS, planHasFeature } from '../server/plans.ts';
import { spendKeyTokens } from '../server/rate-limit/spend-key-tokens.ts';
import { resolveKey } from '../server/auth/sql/resolve-caller.ts';
import { MAIN_KEY_RATE_LIMIT } from '../server/rate-limit/limits.ts';
import { createSecrets } from '../server/secrets.ts';
import { countVisitorMessage } from '../server/widgets/count-visitor-messages.ts';
import { recordVisitorDetailsSql, userAgentOf } from '../server/widgets/sql/record-visitor-details.ts';
import { botReplyContent, readVisitorSession } from '../server/widgets/sql/store-visitor-message.ts';
import { botAnswersOf, readSettings } from '../server/widgets/widget-settings.ts';
import { findOrCreateVisitorContact, WIDGET_CHANNEL } from '../server/widgets/find-or-create-visitor.ts';

const env = (name: string) => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is required`);
  return value;
};

const secrets = createSecrets(Buffer.from(env('SECRET_KEY'), 'utf8'));
// The service's pool size (server/db/orm.ts), so neither side has more connections.
const pool = new pg.Pool({ connectionString: env('DATABASE_URL'), max: 10 });
const allowedPlans = PLANS.filter((plan) => planHasFeature(plan, 'api_access'));
const mode = process.env.BARE_MODE ?? 'counting';
if (mode !== 'counting' && mode !== 'two-reads' && mode !== 'silent-writes') throw new Error('BARE_MODE is counting, two-reads or silent-writes');

const app = fastify({
  https: { key: readFileSync(env('TLS_KEY_FILE')), cert: readFileSync(env('TLS_CERT_FILE')) },
  logger: false,
});

/** The account of a usable key (counted in `counting` mode); null after the reply was sent. */
async function authenticate(apiKey: unknown, reply: { code(status: number): { send(body: unknown): unknown } }) {
  if (typeof apiKey !== 'string') {
    reply.code(401).send('Unauthorized');
    return null;
  }
  const hash = secrets.hashApiKey(apiKey);
  if (mode === 'two-reads') {
    const { rows } = await pool.query<{ account_id: string }>({
      name: 'bare-find-key',
      text: `select k.account_id from api_keys k join accounts a on a.id = k.account_id
        where k.key_hash = $1 and k.revoked_at is null and (k.expires_at is null or k.expires_at > now()) and a.plan = any($2::text[])`,
      values: [hash, allowedPlans],
    });
    if (rows.length === 0) {
      reply.code(401).send('Unauthorized');
      return null;
    }
    return rows[0].account_id;
  }
  const options = { fixedLimit: MAIN_KEY_RATE_LIMIT, allowedPlans, userId: null };
  const spend = await spendKeyTokens(pool, hash, true, (counting) => resolveKey(pool, hash, options, counting));
  if (!spend || !spend.row.usable) {
    reply.code(401).send('Unauthorized');
    return null;
  }
  if (spend.refusedBy) {
    reply.code(429).send({ success: false, error: 'Too many requests', error_code: 429 });
    return null;
  }
  return spend.row.account_id;
}

app.get('/v1/contacts', async (request, reply) => {
  const query = request.query as Record<string, string | undefined>;
  const accountId = await authenticate(query.apiKey, reply);
  if (accountId === null) return reply;
  const { rows } = await pool.query<{ id: string }>({
    name: 'bare-find-contact',
    text: 'select id from contacts where account_id = $1 and phone_number = $2 order by id limit 1',
    values: [accountId, query.phoneNumber],
  });
  if (rows.length === 0) return reply.code(404).send({ success: false, message: 'Contact not found' });
  return { success: true, contactId: rows[0].id };
});

app.post('/v1/contacts', async (request, reply) => {
  const query = request.query as Record<string, string | undefined>;
  const accountId = await authenticate(query.apiKey, reply);
  if (accountId === null) return reply;
  const body = request.body as { phoneNumber: string; listId: string };
  const contactId = `ct_bare${randomBytes(10).toString('hex')}`;
  const client = await pool.connect();
  try {
    await client.query('begin');
    await client.query({
      name: 'bare-insert-contact',
      text: 'insert into contacts (id, account_id, phone_number) values ($1, $2, $3)',
      values: [contactId, accountId, body.phoneNumber],
    });
    await client.query({
      name: 'bare-insert-contact-list',
      text: 'insert into contact_lists (contact_id, list_id, account_id) values ($1, $2, $3)',
      values: [contactId, body.listId, accountId],
    });
    // The outbox row the service writes with every contact (its trigger queues the dispatch).
    const eventId = `evt_bare${randomBytes(10).toString('hex')}`;
    await client.query({
      name: 'bare-insert-event',
      text: "insert into events (id, account_id, name, payload) values ($1, $2, 'Contact Created', $3::jsonb)",
      values: [eventId, accountId, JSON.stringify({ event: 'Contact Created', event_id: eventId, data: { contact: { id: contactId } } })],
    });
    await client.query('commit');
  } catch (error) {
    await client.query('rollback').catch(() => {});
    throw error;
  } finally {
    client.release();
  }
  return reply.code(201).send({ success: true, data: { message: 'Contact created successfully', contactId, listsAdded: [body.listId] } });
});

/** The task the silent job rows name: known to no worker, so none runs them. */
const SILENT_TASK = 'bench_silent_turn';
// Visitor messages come from many loopback addresses; the per-address limits are the scenario's to set.
const SILENT_LIMITS = {
  WIDGET_REQUESTS_PER_IP_PER_MINUTE: 1_000_000,
  WIDGET_MESSAGES_PER_IP_PER_MINUTE: 1_000_000,
  WIDGET_NEW_VISITORS_PER_IP_PER_MINUTE: 1_000_000,
  // The service's defaults, as it counts them.
  WIDGET_MESSAGES_PER_VISITOR_PER_MINUTE: 20,
  WIDGET_MESSAGES_PER_WIDGET_PER_MINUTE: 600,
};

if (mode === 'silent-writes') {
  await pool.query(`insert into graphile_worker._private_tasks (identifier) values ($1) on conflict do nothing`, [SILENT_TASK]);
  app.post('/v1/incoming-chat-widget-message', async (request, reply) => {
    const ownerId = (request.query as Record<string, string | undefined>).userId ?? '';
    const { customData } = request.body as { customData: { body: string; fromId: string; toId: string; messageSid?: string } };
    const widgetId = customData.toId;
    const visitorId = customData.fromId;
    const { rows } = await pool.query({
      name: 'bare-widget',
      text: 'select settings, identity_secret_sealed from chat_widgets where id = $1 and account_id = $2',
      values: [widgetId, ownerId],
    });
    if (rows.length === 0) return reply.code(404).send({ success: false, message: 'Chat widget not found' });
    await countVisitorMessage(pool, SILENT_LIMITS, { accountId: ownerId, widgetId, visitorKey: visitorId, address: request.ip });
    const client = await pool.connect();
    try {
      await client.query('begin');
      const contact = await findOrCreateVisitorContact(client, ownerId, widgetId, visitorId);
      if (contact.archived) await unarchiveOnInbound(client, ownerId, contact.block.id);
      const externalId = customData.messageSid ?? null;
      const bot = await readVisitorSession(client, { accountId: ownerId, contact, externalId, answers: botAnswersOf(readSettings(rows[0].settings), customData.body) });
      if ('repeatedId' in bot) {
        await client.query('commit');
        return { success: true, messageId: bot.repeatedId };
      }
      const { reply } = bot;
      const written = await writeMessage(
        client,
        {
          accountId: ownerId,
          contact: contact.block,
          direction: 'inbound',
          body: customData.body,
          type: 'text',
          channel: WIDGET_CHANNEL,
          status: 'received',
          sender: 'contact',
          senderName: null,
          mediaUrl: null,
          mediaContentType: null,
          externalId,
          providerMessageId: null,
          templateId: null,
          followUp: reply === null ? undefined : (message) => botReplyContent(message.id, reply, WIDGET_CHANNEL),
        },
        bot.open,
        ({ message, sessionStarted }) => ({
          writes: [recordVisitorDetailsSql(ownerId, contact.block.id, { pageUrl: null, referrer: null, language: null, userAgent: userAgentOf(request.headers['user-agent']) }, message.createdAt), ...(!bot.turn ? [] : [
            sql`update contacts set is_bot_typing = true, bot_typing_for = ${message.id}::text where id = ${contact.block.id}::text`,
            sql`insert into graphile_worker._private_jobs (task_id, payload, run_at, max_attempts, key)
  select t.id, ${JSON.stringify({ accountId: ownerId, widgetId, contactId: contact.block.id, messageId: message.id, firstOfSession: sessionStarted })}::json,
         now(), 25, ${`${SILENT_TASK}:${message.id}`}::text
    from graphile_worker._private_tasks t where t.identifier = ${SILENT_TASK}::text`,
          ])],
        }),
      );
      await client.query('commit');
      return { success: true, messageId: written.message.id };
    } catch (error) {
      await client.query('rollback').catch(() => {});
      throw error;
    } finally {
      client.release();
    }
  });
}

app.get('/v1/health', async () => 'ok');

const stop = async () => {
  await app.close();
  await pool.end();
  process.exit(0);
};
process.on('SIGTERM', () => void stop());
process.on('SIGINT', () => void stop());

await app.listen({ port: Number(env('PORT')), host: '127.0.0.1' });
process.stdout.write(`bare listening on https://127.0.0.1:${env('PORT')}\n`);
