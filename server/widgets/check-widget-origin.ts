// The allowed-origins rule of the public widget endpoints: a browser request that says it
// comes from another site (its Origin header) is refused unless that site is this service
// itself (the widget page it serves) or one the owner listed in `allowedOrigins`. Requests
// without an Origin header (servers, same-origin GETs) are not browsers acting for a site.
import { ForbiddenError } from '../errors.ts';
import type { WidgetSettings } from './widget-settings.ts';

export type RequestOrigin = {
  /** The request's Origin header, when sent. */
  origin: string | undefined;
  /** The Host the request was addressed to: this service's own origin is https://<host>. */
  host: string | undefined;
};

export function refuseForeignOrigin(request: RequestOrigin, settings: Pick<WidgetSettings, 'allowedOrigins'>): void {
  const { origin } = request;
  if (origin === undefined) return;
  if (request.host && origin.toLowerCase() === `https://${request.host.toLowerCase()}`) return;
  const allowed = settings.allowedOrigins;
  if (!allowed || allowed.some((candidate) => candidate.toLowerCase() === origin.toLowerCase())) return;
  throw new ForbiddenError('This site may not use the chat widget', { reason: 'origin_not_allowed' });
}
