// Where a request carries its credential, and which kind of credential it is: the `apiKey`
// query parameter, then X-API-Key, then `Authorization: Bearer`; a bearer value of the JWT
// form is an identity-provider ID token, anything else an API key.
import type { IncomingHttpHeaders } from 'node:http';
import { looksLikeJwt } from './key-format.ts';

export type Carrier = { value: string; from: 'query' | 'header' | 'bearer' };

/** Query parameter, then X-API-Key, then bearer: the highest-ranked carrier present is used, right or wrong. */
export function pickCarrier(query: URLSearchParams, headers: IncomingHttpHeaders): Carrier | null {
  const fromQuery = query.get('apiKey');
  if (fromQuery !== null) return { value: fromQuery, from: 'query' };
  const fromHeader = headers['x-api-key'];
  if (typeof fromHeader === 'string') return { value: fromHeader, from: 'header' };
  const authorization = headers.authorization;
  if (typeof authorization === 'string' && /^bearer /i.test(authorization)) {
    return { value: authorization.slice(7).trim(), from: 'bearer' };
  }
  return null;
}

/** Only a bearer value can be an ID token; an API key is never mistaken for one. */
export function carriesIdToken(carrier: Carrier): boolean {
  return carrier.from === 'bearer' && looksLikeJwt(carrier.value);
}

/** The account `userId` selects; absent or empty selects the caller's own. */
export function selectedUserId(query: URLSearchParams): string | null {
  return query.get('userId') || null;
}
