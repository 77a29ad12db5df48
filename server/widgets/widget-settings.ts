// What an owner may configure on a chat widget, validated once here for create and
// update: colours as CSS hex, the bot's texts, the button's corner, the sites that may
// embed the widget. Strings are bounded so a widget's settings stay a small row. Also what
// the settings alone decide for a visitor message (botAnswersOf): the greeting, the away
// message, whether it names a hand-off keyword.
import { z } from 'zod';
import { NON_BLANK_TEXT_PATTERN } from '../input-rules.ts';

const HexColour = z
  .string()
  .regex(/^#(?:[0-9a-fA-F]{3,4}|[0-9a-fA-F]{6}|[0-9a-fA-F]{8})$/, 'must be a CSS hex colour such as #1a73e8');

export const WidgetColors = z.strictObject({
  primary: HexColour.optional(),
  background: HexColour.optional(),
  text: HexColour.optional(),
  /** The visitor's bubbles. */
  visitorBubble: HexColour.optional(),
  /** The bot's and agents' bubbles. */
  botBubble: HexColour.optional(),
});

const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]']);

/**
 * What Origin accepts, for the OpenAPI document: an origin exactly as `new URL(...).origin`
 * writes it. The host is a dotted IPv4 address, or labels of what `new URL` keeps as written
 * (lower-case ASCII) whose last one starts with a letter, so it is never read as a number;
 * a port is 0 to 65535 without leading zeros, not the scheme's default (443, 80). Written
 * without lookaheads, which not every generator reads.
 */
const HOST_CHARACTER = "[a-z0-9!\"$&'()*+,;=_`{}~-]";
const OCTET = '(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])';
const PORT_ABOVE_999 = '[1-9][0-9]{3}|[1-5][0-9]{4}|6[0-4][0-9]{3}|65[0-4][0-9]{2}|655[0-2][0-9]|6553[0-5]';
const HTTPS_PORT = `(?::(?:[0-9]|[1-9][0-9]|[1-35-9][0-9]{2}|4[0-35-9][0-9]|44[0-24-9]|${PORT_ABOVE_999}))?`;
const HTTP_PORT = `(?::(?:[0-9]|[1-79][0-9]|8[1-9]|[1-9][0-9]{2}|${PORT_ABOVE_999}))?`;
const ORIGIN_PATTERN =
  `^(?:https://(?:(?:${HOST_CHARACTER}*\\.)*[a-z]${HOST_CHARACTER}*|(?:${OCTET}\\.){3}${OCTET})${HTTPS_PORT}` +
  `|http://(?:127\\.0\\.0\\.1|localhost|\\[::1\\])${HTTP_PORT})$`;

const Origin = z
  .string()
  .max(200, 'must be at most 200 characters')
  .refine((text) => {
    let url: URL;
    try {
      url = new URL(text);
    } catch {
      return false;
    }
    if (url.origin !== text) return false;
    return url.protocol === 'https:' || (url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname));
  }, 'must be an origin such as https://site.example (scheme and host, optional port, no path; http only for loopback)')
  .meta({ pattern: ORIGIN_PATTERN });

const Text = (max: number) =>
  z.string().trim().min(1, 'must not be empty').max(max, `must be at most ${max} characters`).meta({ pattern: NON_BLANK_TEXT_PATTERN });

export const WidgetSettings = z.strictObject({
  title: Text(100).optional(),
  colors: WidgetColors.optional(),
  /** The bot's answer to the first visitor message of a chat session. */
  greeting: Text(1000).optional(),
  /** The bot's answer to later visitor messages, at most once per AWAY_MESSAGE_INTERVAL_MINUTES. */
  awayMessage: Text(1000).optional(),
  /**
   * Words or phrases that hand a visitor's conversation to a person (hand-off-conversation.ts):
   * matched case-insensitively as whole words in a visitor message (matchHandoffKeyword).
   */
  handoffKeywords: z.array(Text(100)).max(50, 'must list at most 50 keywords').optional(),
  /** What the bot tells the visitor at a hand-off (DEFAULT_HANDOFF_MESSAGE when absent). */
  handoffMessage: Text(1000).optional(),
  /** Whether the widget page offers a "Talk to a person" action (POST /chat-widget-handoff); shown when absent. */
  handoffButton: z.boolean({ error: 'must be true or false' }).optional(),
  position: z.enum(['bottom-right', 'bottom-left'], { error: 'must be bottom-right or bottom-left' }).optional(),
  /** Sites that may embed the widget and call its public endpoints; any site when absent. */
  allowedOrigins: z.array(Origin).max(50, 'must list at most 50 origins').optional(),
  /** Whether visitors prove who they are with a token the site signs (server/widgets/visitor-identity.ts); `off` when absent. */
  identityVerification: z.enum(['off', 'optional', 'required'], { error: 'must be off, optional or required' }).optional(),
});
export type WidgetSettings = z.infer<typeof WidgetSettings>;

const Name = Text(100);

export const ChatWidgetCreateInput = z.object({
  name: Name,
  settings: WidgetSettings.optional(),
});
export type ChatWidgetCreateInput = z.infer<typeof ChatWidgetCreateInput>;

/** `settings`, when sent, replaces the widget's settings as a whole. */
export const ChatWidgetUpdateInput = z.object({
  name: Name.optional(),
  settings: WidgetSettings.optional(),
});
export type ChatWidgetUpdateInput = z.infer<typeof ChatWidgetUpdateInput>;

/** Settings as stored (validated on the way in; read back leniently so an old row never breaks a page). */
export function readSettings(stored: unknown): WidgetSettings {
  const parsed = WidgetSettings.safeParse(stored ?? {});
  return parsed.success ? parsed.data : {};
}

/** The greeting of a widget that sets none. */
export const DEFAULT_GREETING = 'Hi! Thanks for your message. We will get back to you here as soon as we can.';
/** The away message is not given within this many minutes of a bot reply to the visitor. */
export const AWAY_MESSAGE_INTERVAL_MINUTES = 10;

/**
 * The first of `keywords` the text holds as whole words, case-insensitively: `person` matches
 * "A person, please" but not "personal"; a phrase matches with its words in order. Letters and
 * digits of any script count as word characters.
 */
export function matchHandoffKeyword(text: string, keywords: readonly string[] | undefined): string | null {
  if (!keywords?.length) return null;
  const haystack = text.toLocaleLowerCase();
  for (const keyword of keywords) {
    const words = keyword.trim().toLocaleLowerCase().split(/\s+/).filter(Boolean);
    if (!words.length) continue;
    const phrase = words.map((word) => word.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('\\s+');
    if (new RegExp(`(?<![\\p{L}\\p{N}])${phrase}(?![\\p{L}\\p{N}])`, 'u').test(haystack)) return keyword;
  }
  return null;
}

/** What a widget's settings alone have the bot answer to a visitor message. */
export type BotAnswers = {
  /** For a message that opens a chat session. */
  greeting: string;
  /** For a later message, unless the bot replied to the visitor within AWAY_MESSAGE_INTERVAL_MINUTES. */
  awayMessage: string | null;
  /** The text names a hand-off keyword: the bot hands off instead of answering. */
  handsOff: boolean;
};

export function botAnswersOf(settings: WidgetSettings, body: string): BotAnswers {
  return {
    greeting: settings.greeting ?? DEFAULT_GREETING,
    awayMessage: settings.awayMessage ?? null,
    handsOff: matchHandoffKeyword(body, settings.handoffKeywords) !== null,
  };
}
