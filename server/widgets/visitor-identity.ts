// Owner-verified visitor identity (`settings.identityVerification`). The site's back end
// signs an HS256 JWT with the widget's identity secret (`wis_…`, its UTF-8 bytes are the
// HMAC key): `sub` is the site's user id, `email` and `name` optional, `exp` at most 24
// hours ahead; the claims obey the input rules (server/input-rules.ts). The widget sends it
// as X-Visitor-Identity (a socket in its handshake). A verified visitor is known by `sub`,
// not by the visitor id the browser chose: whatever `fromId` each device sends, one site
// user is one contact and one conversation.
// - off (default): the header is ignored; visitors are their `fromId`.
// - optional: a token, when sent, must verify (else 401) and names the visitor.
// - required: every public call of the widget needs a token that verifies (else 401).
// The reads of a widget's identity settings are in read-widget-identity.ts.
import { jwtVerify, errors } from 'jose';
import { ApiError } from '../errors.ts';
import { findClaimProblem } from '../input-rules.ts';
import type { RequestOrigin } from './check-widget-origin.ts';
import type { Secrets } from '../secrets.ts';

export const IDENTITY_SECRET_PREFIX = 'wis_';
export const VISITOR_IDENTITY_HEADER = 'x-visitor-identity';
export const IDENTITY_MODES = ['off', 'optional', 'required'] as const;
export type IdentityMode = (typeof IDENTITY_MODES)[number];

/** Longest lifetime a token may claim, so a leaked one is not a credential for long. */
export const MAX_TOKEN_LIFETIME_SECONDS = 24 * 60 * 60;
/** Clocks of the site's back end and ours may differ this much. */
export const CLOCK_TOLERANCE_SECONDS = 60;
const MAX_TOKEN_LENGTH = 4096;
const MAX_SUB_LENGTH = 200;

/** A verified site user: their key among the widget's visitors is `sub:<sub>`, which no browser-chosen id can be. */
export type VerifiedVisitor = {
  sub: string;
  email: string | null;
  name: string | null;
  /** Until when (seconds since 1970) the token is accepted: its `exp` and the clock tolerance. */
  acceptedUntil: number;
};

/** Whom a public request speaks for: the contact's visitor key, and the verified user when there is one. */
export type WidgetVisitor = { key: string; verified: VerifiedVisitor | null };

/** What a widget row says of identity verification. */
export type WidgetIdentity = { settings: unknown; identity_secret_sealed: string | null };

export class VisitorIdentityError extends ApiError {
  override name = 'VisitorIdentityError';
  constructor(message: string) {
    super(401, message, { reason: 'visitor_identity' });
  }
}

export function identityModeOf(settings: unknown): IdentityMode {
  const mode = (settings as { identityVerification?: unknown } | null)?.identityVerification;
  return IDENTITY_MODES.includes(mode as IdentityMode) ? (mode as IdentityMode) : 'off';
}

/** The header's token, when one was sent (the first, if sent twice). */
export function identityTokenOf(header: string | string[] | undefined): string | undefined {
  const value = Array.isArray(header) ? header[0] : header;
  return value?.trim() || undefined;
}

// Unsealing is an AES-GCM decryption; a busy widget's verified visitors would repeat it on
// every poll. Keyed by the sealed text, so a replaced secret is never served from here.
const unsealed = new Map<string, Uint8Array>();
const MAX_CACHED_SECRETS = 1000;

function hmacKey(secrets: Secrets, sealed: string): Uint8Array {
  let key = unsealed.get(sealed);
  if (!key) {
    if (unsealed.size >= MAX_CACHED_SECRETS) unsealed.clear();
    key = new TextEncoder().encode(secrets.unseal(sealed));
    unsealed.set(sealed, key);
  }
  return key;
}

function optionalText(value: unknown, max: number): string | null {
  if (typeof value !== 'string' || value.trim() === '') return null;
  const text = value.trim().slice(0, max);
  // A cut through a surrogate pair would leave half of it, which PostgreSQL cannot store.
  return text.isWellFormed() ? text : text.slice(0, -1);
}

/** The token's verified user; 401 for anything that does not verify with this widget's secret. */
export async function verifyVisitorToken(secrets: Secrets, sealedSecret: string | null, token: string): Promise<VerifiedVisitor> {
  if (!sealedSecret) throw new VisitorIdentityError('Invalid visitor identity token: the widget has no identity secret yet');
  if (token.length > MAX_TOKEN_LENGTH) throw new VisitorIdentityError('Invalid visitor identity token');
  let payload;
  try {
    ({ payload } = await jwtVerify(token, hmacKey(secrets, sealedSecret), {
      algorithms: ['HS256'],
      requiredClaims: ['sub', 'exp'],
      clockTolerance: CLOCK_TOLERANCE_SECONDS,
    }));
  } catch (error) {
    if (error instanceof errors.JWTExpired) throw new VisitorIdentityError('Invalid visitor identity token: expired');
    if (error instanceof errors.JOSEError || error instanceof TypeError) throw new VisitorIdentityError('Invalid visitor identity token');
    throw error;
  }
  const now = Math.floor(Date.now() / 1000);
  if (payload.exp! > now + MAX_TOKEN_LIFETIME_SECONDS + CLOCK_TOLERANCE_SECONDS) {
    throw new VisitorIdentityError('Invalid visitor identity token: exp must be at most 24 hours ahead');
  }
  // The claims go to SQL: what PostgreSQL cannot store makes the token invalid, not a 5xx.
  const problem = findClaimProblem(payload);
  if (problem) throw new VisitorIdentityError(`Invalid visitor identity token: ${problem.message}`);
  const sub = payload.sub!;
  if (sub.length === 0 || sub.length > MAX_SUB_LENGTH) throw new VisitorIdentityError('Invalid visitor identity token: sub must be 1 to 200 characters');
  return { sub, email: optionalText(payload.email, 320), name: optionalText(payload.name, 200), acceptedUntil: payload.exp! + CLOCK_TOLERANCE_SECONDS };
}

/**
 * Whom the request speaks for, by the widget's mode: the verified user when a token is
 * required or sent, else the browser's visitor id (null for requests that name none).
 */
export async function resolveWidgetVisitor(secrets: Secrets, widget: WidgetIdentity, fromId: string | null, token: string | undefined): Promise<WidgetVisitor | null> {
  const mode = identityModeOf(widget.settings);
  if (mode !== 'off' && token !== undefined) {
    const verified = await verifyVisitorToken(secrets, widget.identity_secret_sealed, token);
    return { key: `sub:${verified.sub}`, verified };
  }
  if (mode === 'required') throw new VisitorIdentityError('This chat widget requires a visitor identity token (X-Visitor-Identity)');
  return fromId === null ? null : { key: fromId, verified: null };
}

/** After the statement: a widget that requires identity refuses a request without a verified user. */
export function checkWidgetVisitor(settings: unknown, visitor: WidgetVisitor): void {
  if (identityModeOf(settings) === 'required' && !visitor.verified) {
    throw new VisitorIdentityError('This chat widget requires a visitor identity token (X-Visitor-Identity)');
  }
}

/** What the public endpoints know of the request besides its input. */
export type VisitorRequest = RequestOrigin & {
  /** The client's address, by TRUST_PROXY's rules: what the per-address limits count. */
  address: string;
  identityToken: string | undefined;
  /** The User-Agent header: a visitor message keeps it with the contact's details. */
  userAgent?: string;
};
