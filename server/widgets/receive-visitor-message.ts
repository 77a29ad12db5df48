// POST /incoming-chat-widget-message: a visitor's message, stored in ONE pool transaction
// with what it implies (the visitor's contact, the bot's answer when the settings decide it,
// what the page reported), its live events announced with the COMMIT. A message naming a
// hand-off keyword queues the bot's turn instead (take-bot-turn.ts), keyed by the `messageId`
// answered. The abuse limits are counted first, so a refused message costs no transaction.
// A returning visitor's message is three round trips: the count (with the widget read), BEGIN
// with the contact's lock and the session read after it, and the write with COMMIT and the
// announcement.
import type pg from 'pg';
import { z } from 'zod';
import { openPoolTransaction } from '../db/pool-transaction.ts';
import { prepared, queryRows, sql } from '../db/sql.ts';
import { InvalidInputError, MissingParametersError, NotFoundError } from '../errors.ts';
import { HttpUrl, NON_BLANK_TEXT_PATTERN } from '../input-rules.ts';
import { announceAfterCommitText } from '../realtime/publish-conversation-events.ts';
import type { Secrets } from '../secrets.ts';
import { refuseForeignOrigin } from './check-widget-origin.ts';
import { countVisitorMessage, countVisitorMessageReadingWidget, type MessageLimits } from './count-visitor-messages.ts';
import { countingRefusals } from './count-visitor-requests.ts';
import { findOrCreateVisitorContact, lockVisitorContact, WIDGET_CHANNEL, type ContactRow } from './find-or-create-visitor.ts';
import { userAgentOf } from './sql/record-visitor-details.ts';
import {
  botPartOf,
  checksLately,
  NO_SESSION,
  visitorMessageWrite,
  visitorSessionOfKeySql,
  type VisitorMessage,
  type VisitorSessionRow,
} from './sql/store-visitor-message.ts';
import { checkWidgetVisitor, resolveWidgetVisitor, type VisitorRequest, type WidgetIdentity, type WidgetVisitor } from './visitor-identity.ts';
import { MAX_WIDGET_ID_LENGTH } from './widget-record.ts';
import { botAnswersOf, readSettings, type WidgetSettings } from './widget-settings.ts';

export const CHAT_WIDGET_MESSAGE_TASK = 'chat_widget_message';
/** Longest visitor message text. */
export const MAX_VISITOR_MESSAGE_LENGTH = 4000;

/** Visitor ids are what the widget page keeps in the browser. */
export const VisitorId = z.string().regex(/^[A-Za-z0-9_-]{1,128}$/, 'must be 1 to 128 letters, digits, - or _');
export const WidgetId = z.string().min(1, 'must not be empty').max(MAX_WIDGET_ID_LENGTH, `must be at most ${MAX_WIDGET_ID_LENGTH} characters`);
/** Longest page address or referrer a visitor message may report. */
export const MAX_PAGE_URL_LENGTH = 2000;
const WebAddress = z
  .url({ protocol: /^https?$/, error: 'must be an http(s) URL' })
  .max(MAX_PAGE_URL_LENGTH, `must be at most ${MAX_PAGE_URL_LENGTH} characters`);
/** A BCP 47 language tag as browsers report it (`en`, `pt-BR`, `zh-Hant-TW`). */
const LANGUAGE_TAG = /^[A-Za-z]{1,8}(?:-[A-Za-z0-9]{1,8}){0,7}$/;

export const VisitorMessageInput = z.object({
  customData: z.object({
    body: z
      .string()
      .max(MAX_VISITOR_MESSAGE_LENGTH, `must be at most ${MAX_VISITOR_MESSAGE_LENGTH} characters`)
      .refine((text) => text.trim() !== '', 'must not be empty')
      .meta({ pattern: NON_BLANK_TEXT_PATTERN }),
    fromId: VisitorId.describe('The visitor id.'),
    toId: WidgetId.describe('The widget id (configId).'),
    messageSid: z.string().max(200).optional().describe("The widget's id for the message; stored as its external id."),
    id: z.string().max(200).optional().describe('Alternative identifier, used when messageSid is absent.'),
    status: z.string().max(40).optional().describe('Default `received`.'),
    mediaUrl: HttpUrl.max(2000).nullable().optional(),
    mediaContentType: z.string().max(200).nullable().optional(),
    pageUrl: WebAddress.optional().describe('The address of the page the visitor writes from (the widget page sends it); kept with the contact.'),
    referrer: WebAddress.optional().describe("That page's referrer, where the visitor came from (the widget page sends it); kept with the contact."),
    language: z
      .string()
      .regex(LANGUAGE_TAG, 'must be a language tag such as en or pt-BR')
      .optional()
      .describe("The browser's language (navigator.language; the widget page sends it); kept with the contact."),
  })
    // receiveVisitorMessage's rule, stated in the OpenAPI document: a media type (not null or empty) needs a mediaUrl.
    .meta({
      dependentSchemas: {
        mediaContentType: {
          anyOf: [{ properties: { mediaContentType: { enum: [null, ''] } } }, { required: ['mediaUrl'], properties: { mediaUrl: { type: 'string' } } }],
        },
      },
    }),
  messageType: z.string().max(40).default('text').describe('text, reaction, ...'),
  /** The owner's account id; normally the `userId` query parameter. */
  userId: z.string().min(1, 'userId is required').max(200).optional().describe("Required: the widget owner's account id (the configuration's `userId`)."),
});
export type VisitorMessageInput = z.infer<typeof VisitorMessageInput>;

const readWidgetSettings = (widgetId: string, ownerId: string) =>
  prepared('visitor-widget-settings', sql`select settings, identity_secret_sealed from chat_widgets where id = ${widgetId} and account_id = ${ownerId}`);

export type BotTurnJob = {
  accountId: string;
  widgetId: string;
  contactId: string;
  messageId: string;
  /** The message opened a new chat session (a job queued before the greeting was written with the message greets). */
  firstOfSession: boolean;
};

export type VisitorMessageDeps = { pool: pg.Pool; secrets: Secrets; limits: MessageLimits };

/** The widget's settings, and the visitor the message is from. */
type WidgetAndVisitor = { settings: WidgetSettings; visitor: WidgetVisitor };

/** The message's widget as the visitor names it: the owner's account, the widget, and the visitor's own id. */
type MessageTarget = { ownerId: string; widgetId: string; fromId: string };

/**
 * A visitor with no identity token is its `fromId`: the message is counted and the widget
 * read in one statement, then the widget's checks run (404, 403 for a foreign origin, 401
 * when it requires a token), as the conversation poll does.
 */
async function countReadingWidget(
  { pool, limits }: VisitorMessageDeps,
  { ownerId, widgetId, fromId }: MessageTarget,
  request: VisitorRequest,
): Promise<WidgetAndVisitor> {
  const widget = await countVisitorMessageReadingWidget(pool, limits, { accountId: ownerId, widgetId, visitorKey: fromId, address: request.address });
  if (!widget) throw new NotFoundError('Chat widget not found');
  const settings = readSettings(widget.settings);
  refuseForeignOrigin(request, settings);
  const visitor: WidgetVisitor = { key: fromId, verified: null };
  checkWidgetVisitor(widget.settings, visitor);
  return { settings, visitor };
}

/** With an identity token, the visitor is known once the widget's secret has verified it: the widget is read first. */
async function readThenCount(
  { pool, secrets, limits }: VisitorMessageDeps,
  { ownerId, widgetId, fromId }: MessageTarget,
  request: VisitorRequest,
): Promise<WidgetAndVisitor> {
  const [widget] = await queryRows<WidgetIdentity>(pool, readWidgetSettings(widgetId, ownerId));
  if (!widget) throw new NotFoundError('Chat widget not found');
  const settings = readSettings(widget.settings);
  refuseForeignOrigin(request, settings);
  // A verified user is one contact whatever visitor id this device sends.
  const visitor = (await countingRefusals(pool, request.address, limits.WIDGET_REQUESTS_PER_IP_PER_MINUTE, () =>
    resolveWidgetVisitor(secrets, widget, fromId, request.identityToken),
  ))!;
  await countVisitorMessage(pool, limits, { accountId: ownerId, widgetId, visitorKey: visitor.key, address: request.address });
  return { settings, visitor };
}

export async function receiveVisitorMessage(
  deps: VisitorMessageDeps,
  ownerId: string | undefined,
  input: VisitorMessageInput,
  request: VisitorRequest,
): Promise<{ messageId: string }> {
  if (!ownerId) throw new MissingParametersError('userId is required');
  const { customData } = input;
  const widgetId = customData.toId;

  if (customData.mediaContentType && !customData.mediaUrl) {
    throw new InvalidInputError('customData.mediaUrl is required with mediaContentType', { details: [{ path: 'customData.mediaUrl', message: 'is required with mediaContentType' }] });
  }
  // Counted before the transaction: a refused message costs one statement, not a transaction.
  const target = { ownerId, widgetId, fromId: customData.fromId };
  const { settings, visitor } = request.identityToken === undefined ? await countReadingWidget(deps, target, request) : await readThenCount(deps, target, request);
  const visitorId = visitor.key;

  const answers = botAnswersOf(settings, customData.body);
  const externalId = customData.messageSid ?? customData.id ?? null;
  // The session is read by a statement of its own after the lock's: one statement reads one snapshot, taken before it waits.
  const readSession = visitorSessionOfKeySql({ accountId: ownerId, widgetId, visitorId }, externalId, checksLately(answers));
  const transaction = await openPoolTransaction(deps.pool, { with: [lockVisitorContact(widgetId, visitorId, ownerId), readSession] });
  try {
    const [locked, session] = transaction.opened as [pg.QueryResult<ContactRow>, pg.QueryResult<VisitorSessionRow>];
    const contact = await findOrCreateVisitorContact(transaction.client, ownerId, widgetId, visitorId, visitor.verified, locked.rows);
    const visit: VisitorMessage = {
      accountId: ownerId,
      widgetId,
      visitorId,
      contact,
      body: customData.body,
      type: customData.mediaContentType?.startsWith('image/') ? 'image' : 'text',
      channel: WIDGET_CHANNEL,
      status: customData.status ?? 'received',
      mediaUrl: customData.mediaUrl ?? null,
      mediaContentType: customData.mediaContentType ?? null,
      externalId,
      details: {
        pageUrl: customData.pageUrl ?? null,
        referrer: customData.referrer ?? null,
        language: customData.language ?? null,
        userAgent: userAgentOf(request.userAgent),
      },
      answers,
      job: {
        task: CHAT_WIDGET_MESSAGE_TASK,
        // No visitor id in the payload: job payloads reach the worker's logs; the turn reads it from the contact.
        payload: (messageId, firstOfSession): BotTurnJob => ({ accountId: ownerId, widgetId, contactId: contact.block.id, messageId, firstOfSession }),
      },
    };
    // A contact found only after the lock's read (another message created it meanwhile) is read again under its lock.
    const open = locked.rows.length > 0 ? session.rows[0]! : contact.created ? NO_SESSION : (await queryRows<VisitorSessionRow>(transaction.client, readSession))[0]!;
    const bot = botPartOf(visit, open);
    if ('repeatedId' in bot) {
      await transaction.end();
      return { messageId: bot.repeatedId };
    }
    const write = visitorMessageWrite(visit, bot);
    await transaction.commitWith(write.statement, announceAfterCommitText(write.announce));
    return { messageId: write.messageId };
  } catch (error) {
    // Rolled back, unless commitWith ended it already; rethrows.
    await transaction.end(error);
    throw error;
  }
}
