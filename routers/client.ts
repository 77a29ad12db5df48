// The typed client internal TypeScript apps use, published as this package's `./client`
// export: `import { createClient } from 'messaging-automation-api/client'`. Queries and
// mutations go over HTTPS (one request per call, which the server answers fastest);
// subscriptions over one WebSocket, opened on first use.
import { createTRPCClient, createWSClient, httpLink, splitLink, wsLink, type OperationLink, type TRPCClient, type TRPCLink } from '@trpc/client';
import { Agent, fetch as undiciFetch } from 'undici';
import WebSocket from 'ws';
import type { AppRouter } from './index.ts';

export type { AppRouter } from './index.ts';

export type ClientOptions = {
  /** The service's origin or its /trpc URL: `https://api.example.com` or `https://api.example.com/trpc`. */
  url: string;
  apiKey: string;
  /**
   * Accept the self-signed certificate a local service generates. Only when NODE_ENV is
   * `development` (the default there); refused otherwise, so it cannot reach production.
   */
  allowSelfSignedCertificate?: boolean;
};

export type MessagingClient = TRPCClient<AppRouter> & {
  /** Closes the subscription WebSocket (if one was opened) and pooled HTTPS connections. */
  close(): Promise<void>;
};

function trpcUrl(url: string): URL {
  const parsed = new URL(url);
  if (parsed.protocol !== 'https:') throw new Error('createClient: the url must be https:// (the service refuses plain HTTP)');
  if (!parsed.pathname.replace(/\/+$/, '').endsWith('/trpc')) parsed.pathname = `${parsed.pathname.replace(/\/+$/, '')}/trpc`;
  return parsed;
}

export function createClient(options: ClientOptions): MessagingClient {
  const development = process.env.NODE_ENV === 'development';
  const selfSigned = options.allowSelfSignedCertificate ?? development;
  if (selfSigned && !development) {
    throw new Error('createClient: allowSelfSignedCertificate is only for NODE_ENV=development');
  }
  const base = trpcUrl(options.url);
  const dispatcher = new Agent({ connect: { rejectUnauthorized: !selfSigned } });
  const headers = { 'x-api-key': options.apiKey };

  let wsClient: ReturnType<typeof createWSClient> | undefined;
  const socketUrl = new URL(base);
  socketUrl.protocol = 'wss:';
  socketUrl.searchParams.set('apiKey', options.apiKey);
  const wsClientOnce = () =>
    (wsClient ??= createWSClient({
      url: socketUrl.toString(),
      WebSocket: class extends WebSocket {
        constructor(url: string | URL, protocols?: string | string[]) {
          super(url, protocols, { rejectUnauthorized: !selfSigned });
        }
      } as never,
    }));

  // The WebSocket opens on the first subscription, not when the client is made.
  const lazyWsLink: TRPCLink<AppRouter> = (runtime) => {
    let operationLink: OperationLink<AppRouter> | undefined;
    return (operation) => (operationLink ??= wsLink<AppRouter>({ client: wsClientOnce() })(runtime))(operation);
  };

  const client = createTRPCClient<AppRouter>({
    links: [
      splitLink({
        condition: (operation) => operation.type === 'subscription',
        true: lazyWsLink,
        false: httpLink({
          url: base.toString(),
          headers,
          fetch: (url, init) => undiciFetch(url as string, { ...(init as object), dispatcher }) as never,
        }),
      }),
    ],
  });
  const close = async () => {
    await wsClient?.close();
    await dispatcher.close();
  };
  // tRPC's client is a proxy of procedure paths; `close` is answered beside it, not set on it.
  return new Proxy(client, { get: (target, key) => (key === 'close' ? close : Reflect.get(target, key)) }) as MessagingClient;
}
