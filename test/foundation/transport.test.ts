// One port, HTTPS: the plain-HTTP answer, body limits, malformed JSON, unknown
// paths, the generated certificate, and TLS termination by a trusted proxy.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import tls from 'node:tls';
import { request as httpRequest } from 'node:http';
import { describe, expect, test } from 'vitest';
import { BODY_LIMIT_BYTES } from '../../server/http/host.ts';
import { routerWithSlowProcedure } from '../helpers/slow-procedure.ts';
import { serviceForFile } from '../helpers/service-for-file.ts';
import { startTestService, type TestService } from '../helpers/service.ts';

let service: TestService;
let account: { userId: string; apiKey: string };

serviceForFile({ accounts: [{}] }, (started) => ({ service, accounts: [account] } = started));

/** Sends raw bytes to the port and returns everything the server answers. */
function rawExchange(port: number, payload: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => socket.write(payload));
    let received = '';
    socket.on('data', (chunk) => (received += chunk.toString()));
    socket.on('end', () => resolve(received));
    socket.on('error', reject);
  });
}

describe('plain HTTP on the HTTPS port', () => {
  test('is answered 403 with the contract body before any authentication', async () => {
    const answer = await rawExchange(service.port, `GET /v1/contacts?apiKey=${account.apiKey}&phoneNumber=%2B14155550100 HTTP/1.1\r\nHost: localhost\r\n\r\n`);
    const [head, body] = answer.split('\r\n\r\n');
    expect(head.split('\r\n')[0]).toBe('HTTP/1.1 403 Forbidden');
    expect(head.toLowerCase()).toContain('content-type: application/json');
    expect(JSON.parse(body)).toEqual({ success: false, error: 'HTTPS is required', error_code: 403 });
  });

  test('a POST with a body gets the same answer and creates nothing', async () => {
    const json = JSON.stringify({ phoneNumber: '+14155550123' });
    const answer = await rawExchange(
      service.port,
      `POST /v1/contacts?apiKey=${account.apiKey} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: ${json.length}\r\n\r\n${json}`,
    );
    expect(answer).toContain('HTTPS is required');
    const lookup = await service.request('GET', '/contacts', { apiKey: account.apiKey, query: { phoneNumber: '+14155550123' } });
    expect(lookup.status).toBe(404);
  });

  test('HTTPS on the same port keeps working (TLS handshake with SNI localhost)', async () => {
    const certificate = await new Promise<tls.PeerCertificate>((resolve, reject) => {
      const socket = tls.connect({ port: service.port, host: '127.0.0.1', servername: 'localhost', rejectUnauthorized: false }, () => {
        resolve(socket.getPeerCertificate());
        socket.end();
      });
      socket.on('error', reject);
    });
    expect(certificate.subject.CN).toBe('localhost');
    expect(certificate.subjectaltname).toContain('DNS:localhost');
  });
});

describe('request bodies', () => {
  test(`a body over ${BODY_LIMIT_BYTES} bytes is 413 with the error envelope`, async () => {
    const response = await service.request('POST', '/contacts', {
      apiKey: account.apiKey,
      rawBody: JSON.stringify({ phoneNumber: '+14155550100', firstName: 'x'.repeat(BODY_LIMIT_BYTES) }),
      headers: { 'content-type': 'application/json' },
    });
    expect(response.status).toBe(413);
    expect(response.body).toEqual({ success: false, error: expect.stringMatching(/too large|larger/), error_code: 413 });
  });

  test('malformed JSON is 400 with the error envelope', async () => {
    const response = await service.request('POST', '/lists', { apiKey: account.apiKey, rawBody: '{"name":', headers: { 'content-type': 'application/json' } });
    expect(response.status).toBe(400);
    expect(response.body).toEqual({ success: false, error: 'Request body is not valid JSON', error_code: 400 });
  });

  test('malformed JSON on a plain-string endpoint is answered in that endpoint\'s shape', async () => {
    const response = await service.request('POST', '/contacts/lists', { apiKey: account.apiKey, rawBody: '{', headers: { 'content-type': 'application/json' } });
    expect(response.status).toBe(400);
    expect(response.contentType).toMatch(/^text\/plain/);
  });

  test('a JSON body without a content type is accepted', async () => {
    const response = await service.request('POST', '/lists', { apiKey: account.apiKey, rawBody: JSON.stringify({ name: 'No content type' }) });
    expect(response.status).toBe(201);
  });

  test('an empty body is no body (fields come from the query string)', async () => {
    const response = await service.request('POST', '/lists', { apiKey: account.apiKey, query: { name: 'From query' }, rawBody: '' });
    expect(response.status).toBe(201);
    expect(response.body.data.name).toBe('From query');
  });
});

test('an idle keep-alive connection is kept 72 s, longer than common load balancers keep theirs (60 s), with TLS on and off', async () => {
  const response = await service.request('GET', '/health');
  expect(response.headers.get('keep-alive')).toBe('timeout=72');
  const behindProxy = await startTestService({ databaseUrl: service.databaseUrl, env: { TLS: 'off', TRUST_PROXY: '127.0.0.1' } });
  try {
    const plain = await new Promise<string | undefined>((resolve, reject) => {
      const req = httpRequest({ host: '127.0.0.1', port: behindProxy.port, path: '/v1/health', headers: { 'x-forwarded-proto': 'https' } }, (res) => {
        res.resume();
        resolve(String(res.headers['keep-alive']));
      });
      req.on('error', reject);
      req.end();
    });
    expect(plain).toBe('timeout=72');
  } finally {
    await behindProxy.stop();
  }
});

describe('unknown paths and methods', () => {
  test('an unknown path under /v1 is 404 with the error envelope', async () => {
    const response = await service.request('GET', '/no-such-thing', { apiKey: account.apiKey });
    expect(response.status).toBe(404);
    expect(response.body).toEqual({ success: false, error: expect.stringContaining('/v1/no-such-thing'), error_code: 404 });
  });

  test('a known path with another method is 405 with the error envelope', async () => {
    const response = await service.request('PATCH', '/contacts', { apiKey: account.apiKey, body: {} });
    expect(response.status).toBe(405);
    expect(response.body).toEqual({ success: false, error: expect.any(String), error_code: 405 });
  });

  test.each([
    ['DELETE', '/lists', ['GET', 'POST']],
    ['PUT', '/lists', ['GET', 'POST']],
    ['PUT', '/contacts', ['GET', 'POST']],
    ['DELETE', '/tags', ['GET', 'POST']],
  ])('%s %s, which another method serves, is 405 with Allow, not that method\'s path missing its id', async (method, pathname, allow) => {
    const response = await service.request(method, pathname, { apiKey: account.apiKey, body: {}, unchecked: true });
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')?.split(', ').sort()).toEqual(allow);
    expect(response.body).toEqual({ success: false, error: `Method ${method} is not allowed on this path`, error_code: 405 });
  });

  test('every fixed operation path, called with a method no operation serves there, is 405 with Allow naming its methods', async () => {
    const document = (await service.request('GET', '/openapi.json')).body as { paths: Record<string, Record<string, unknown>> };
    const wrong: string[] = [];
    for (const pathname of Object.keys(document.paths).filter((candidate) => !candidate.includes('{'))) {
      // The methods of this path item alone: as OpenAPI matches paths, /api-keys/current is
      // that path, not /api-keys/{id} (PATCH /api-keys/current is 405, not a key named "current").
      const allowed = Object.keys(document.paths[pathname]!).map((method) => method.toUpperCase()).sort();
      for (const method of ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'].filter((candidate) => !allowed.includes(candidate))) {
        const response = await service.request(method, pathname, { apiKey: account.apiKey, body: method === 'GET' ? undefined : {}, unchecked: true });
        const allow = response.headers.get('allow')?.split(', ').sort().join(', ');
        if (response.status !== 405 || allow !== allowed.join(', ')) wrong.push(`${method} ${pathname}: ${response.status} Allow ${allow}`);
      }
    }
    expect(wrong).toEqual([]);
  });

  test('a path outside /v1 and /trpc is 404 with the error envelope', async () => {
    const response = await service.request('GET', '/v2/contacts');
    expect(response.status).toBe(404);
    expect(response.body.error_code).toBe(404);
  });
});

/** Sends raw bytes over TLS (for requests fetch cannot send) and parses the one response. */
function tlsExchange(port: number, payload: string): Promise<{ statusLine: string; headers: Record<string, string>; body: string }> {
  return new Promise((resolve, reject) => {
    const socket = tls.connect({ port, host: '127.0.0.1', servername: 'localhost', rejectUnauthorized: false }, () => socket.write(payload));
    let received = '';
    const done = () => {
      const [head, ...rest] = received.split('\r\n\r\n');
      const [statusLine, ...lines] = head.split('\r\n');
      const headers = Object.fromEntries(lines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]));
      resolve({ statusLine, headers, body: rest.join('\r\n\r\n') });
    };
    socket.on('data', (chunk) => (received += chunk.toString()));
    socket.on('end', done);
    // The server may answer and close while a large request is still being written.
    socket.on('error', (error) => (received ? done() : reject(error)));
  });
}

describe('answers Node and fastify would otherwise give in their own shapes', () => {
  test('a malformed percent-encoding in the path is 400 in the endpoint\'s shape (envelope by default)', async () => {
    const tag = await tlsExchange(service.port, `GET /v1/tags/%FF?apiKey=${account.apiKey} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n`);
    expect(tag.statusLine).toBe('HTTP/1.1 400 Bad Request');
    expect(tag.headers['content-type']).toMatch(/^application\/json/);
    expect(JSON.parse(tag.body)).toEqual({ success: false, error: 'The URL path is not validly percent-encoded', error_code: 400 });
    // GET /contacts/tags/{contactId} answers its 400s as {success:false, message}.
    const contactTags = await tlsExchange(service.port, `GET /v1/contacts/tags/%E0%A4%A?apiKey=${account.apiKey} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n`);
    expect(contactTags.statusLine).toBe('HTTP/1.1 400 Bad Request');
    expect(JSON.parse(contactTags.body)).toEqual({ success: false, message: 'The URL path is not validly percent-encoded' });
  });

  test('a request head over the size limit (an over-long query) is 431 with the error envelope', async () => {
    const answer = await tlsExchange(service.port, `GET /v1/tags?apiKey=${account.apiKey}&q=${'a'.repeat(20_000)} HTTP/1.1\r\nHost: localhost\r\n\r\n`);
    expect(answer.statusLine).toBe('HTTP/1.1 431 Request Header Fields Too Large');
    expect(answer.headers['content-type']).toMatch(/^application\/json/);
    expect(answer.headers.connection).toBe('close');
    expect(JSON.parse(answer.body)).toEqual({ success: false, error: expect.stringMatching(/larger than 16384 bytes/), error_code: 431 });
  });

  test('a request Node cannot parse (a NUL byte in a header) is 400 with the error envelope', async () => {
    const answer = await tlsExchange(service.port, `GET /v1/tags?apiKey=${account.apiKey} HTTP/1.1\r\nHost: localhost\r\nX-Note: a\u0000b\r\n\r\n`);
    expect(answer.statusLine).toBe('HTTP/1.1 400 Bad Request');
    expect(JSON.parse(answer.body)).toEqual({ success: false, error: 'Malformed HTTP request', error_code: 400 });
  });

  test.each([
    ['TRACE', ''],
    ['QUERY', ''],
    ['QUERY', 'Content-Type: application/json\r\nContent-Length: 2\r\n'],
    ['PROPFIND', ''],
    ['BREW', ''],
  ])('%s on an existing path is 405 with the error envelope and Allow (%s)', async (method, extraHeaders) => {
    const body = extraHeaders ? '{}' : '';
    const answer = await tlsExchange(service.port, `${method} /v1/contacts?apiKey=${account.apiKey} HTTP/1.1\r\nHost: localhost\r\n${extraHeaders}Connection: close\r\n\r\n${body}`);
    expect(answer.statusLine).toBe('HTTP/1.1 405 Method Not Allowed');
    expect(answer.headers['content-type']).toMatch(/^application\/json/);
    expect(answer.headers.allow?.split(', ').sort()).toEqual(['GET', 'POST']);
    expect(JSON.parse(answer.body)).toEqual({ success: false, error: `Method ${method} is not allowed on this path`, error_code: 405 });
  });

  test('an unknown method outside /v1 procedures is 405 on a plain route too (/v1/health)', async () => {
    const answer = await tlsExchange(service.port, 'TRACE /v1/health HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n');
    expect(answer.statusLine).toBe('HTTP/1.1 405 Method Not Allowed');
    expect(answer.headers.allow).toBe('GET');
  });

  test.each(['TRACE', 'QUERY', 'BREW'])('%s on a /v1 path that does not exist stays 404 with the error envelope', async (method) => {
    const answer = await tlsExchange(service.port, `${method} /v1/no-such-thing HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n`);
    expect(answer.statusLine).toBe('HTTP/1.1 404 Not Found');
    expect(JSON.parse(answer.body)).toEqual({ success: false, error: `No endpoint ${method} /v1/no-such-thing`, error_code: 404 });
  });
});

test('a request arriving on an open connection while the service stops is 503 in the error envelope', async () => {
  const { router: slowRouter, inside, release } = routerWithSlowProcedure();
  const stopping = await startTestService({ definition: { router: slowRouter } });

  const socket = tls.connect({ port: stopping.port, host: '127.0.0.1', servername: 'localhost', rejectUnauthorized: false });
  let received = '';
  socket.on('data', (chunk) => (received += chunk.toString()));
  const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
  socket.write('GET /v1/test-slow HTTP/1.1\r\nHost: localhost\r\n\r\n');
  await inside;
  const stopped = stopping.stop();
  // Once new connections are refused the host is closing; the held connection is still open.
  for (;;) {
    const refused = await new Promise<boolean>((resolve) => {
      const probe = net.connect(stopping.port, '127.0.0.1', () => resolve(false));
      probe.on('error', () => resolve(true));
      probe.on('connect', () => probe.destroy());
    });
    if (refused) break;
  }
  socket.write('GET /v1/health HTTP/1.1\r\nHost: localhost\r\n\r\n');
  release();
  await closed;
  await stopped;
  const responses = received.split(/(?=HTTP\/1\.1 )/);
  expect(responses).toHaveLength(2);
  expect(responses[0]).toMatch(/^HTTP\/1\.1 200 /);
  const [head, body] = responses[1].split('\r\n\r\n');
  expect(head).toMatch(/^HTTP\/1\.1 503 Service Unavailable/);
  expect(head.toLowerCase()).toContain('content-type: application/json');
  expect(JSON.parse(body)).toEqual({ success: false, error: 'The service is shutting down; retry the request', error_code: 503 });
});

describe('TLS material', () => {
  test('a self-signed certificate is generated once into DATA_DIR and reused', async () => {
    // A DATA_DIR of its own, used by one service after the other, as restarts use it.
    const dataDir = await mkdtemp(path.join(tmpdir(), 'mapi-tls-'));
    try {
      const first = await startTestService({ databaseUrl: service.databaseUrl, env: { DATA_DIR: dataDir } });
      const generated = await readFile(path.join(dataDir, 'tls-cert.pem'), 'utf8');
      await first.stop();
      const second = await startTestService({ databaseUrl: service.databaseUrl, env: { DATA_DIR: dataDir } });
      try {
        expect(await readFile(path.join(dataDir, 'tls-cert.pem'), 'utf8')).toBe(generated);
        expect((await second.request('GET', '/health')).status).toBe(200);
      } finally {
        await second.stop();
      }
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});

describe('TLS=off behind a trusted proxy', () => {
  function plainRequest(port: number, headers: Record<string, string>): Promise<{ status: number; body: string }> {
    return new Promise((resolve, reject) => {
      const req = httpRequest({ host: '127.0.0.1', port, path: `/v1/lists?apiKey=${account.apiKey}`, headers }, (res) => {
        let body = '';
        res.on('data', (chunk) => (body += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      });
      req.on('error', reject);
      req.end();
    });
  }

  test('X-Forwarded-Proto is believed from TRUST_PROXY addresses only', async () => {
    const trusted = await startTestService({ databaseUrl: service.databaseUrl, env: { TLS: 'off', TRUST_PROXY: '127.0.0.1' } });
    const untrusted = await startTestService({ databaseUrl: service.databaseUrl, env: { TLS: 'off', TRUST_PROXY: '10.9.8.7' } });
    try {
      const viaProxy = await plainRequest(trusted.port, { 'x-forwarded-proto': 'https' });
      expect(viaProxy.status).toBe(200);
      const notHttps = await plainRequest(trusted.port, { 'x-forwarded-proto': 'http' });
      expect(notHttps.status).toBe(403);
      expect(JSON.parse(notHttps.body)).toEqual({ success: false, error: 'HTTPS is required', error_code: 403 });
      const noHeader = await plainRequest(trusted.port, {});
      expect(noHeader.status).toBe(403);
      const spoofed = await plainRequest(untrusted.port, { 'x-forwarded-proto': 'https' });
      expect(spoofed.status).toBe(403);
    } finally {
      await trusted.stop();
      await untrusted.stop();
    }
  });
  test('with TLS=off a WebSocket upgrade, which fastify never sees, needs X-Forwarded-Proto https from a TRUST_PROXY address too', async () => {
    const trusted = await startTestService({ databaseUrl: service.databaseUrl, env: { TLS: 'off', TRUST_PROXY: '127.0.0.1' } });
    const untrusted = await startTestService({ databaseUrl: service.databaseUrl, env: { TLS: 'off', TRUST_PROXY: '10.9.8.7' } });
    try {
      for (const pathname of ['/socket.io/?EIO=4&transport=websocket', `/trpc?apiKey=${account.apiKey}`]) {
        expect(await plainUpgrade(trusted.port, pathname, { 'x-forwarded-proto': 'https' }), pathname).toBe(101);
        expect(await plainUpgrade(trusted.port, pathname, {}), pathname).toBe(403);
        expect(await plainUpgrade(trusted.port, pathname, { 'x-forwarded-proto': 'http' }), pathname).toBe(403);
        expect(await plainUpgrade(untrusted.port, pathname, { 'x-forwarded-proto': 'https' }), pathname).toBe(403);
      }
    } finally {
      await trusted.stop();
      await untrusted.stop();
    }
  });
});

/** The status a plain-HTTP WebSocket upgrade request is answered with (101 when it is accepted). */
function plainUpgrade(port: number, pathname: string, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({
      host: '127.0.0.1',
      port,
      path: pathname,
      headers: { connection: 'Upgrade', upgrade: 'websocket', 'sec-websocket-version': '13', 'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==', ...headers },
    });
    req.on('upgrade', (response, socket) => {
      socket.destroy();
      resolve(response.statusCode ?? 0);
    });
    req.on('response', (response) => {
      response.resume();
      resolve(response.statusCode ?? 0);
    });
    req.on('error', reject);
    req.end();
  });
}

describe('a path missing its trailing parameter', () => {
  test('reaches the endpoint, which answers its own "missing id" error (not 404 or 405)', async () => {
    for (const pathname of ['/contacts/tags/', '/contacts/tags']) {
      const response = await service.request('GET', pathname, { apiKey: account.apiKey });
      expect(response.status, pathname).toBe(400);
      expect(response.body, pathname).toEqual({ success: false, message: expect.stringMatching(/contactId/) });
    }
  });

  test('with a trailing slash, even where another method serves the path without it (PATCH /api-keys/ is an empty id)', async () => {
    const response = await service.request('PATCH', '/api-keys/', { apiKey: account.apiKey, body: { label: 'x' } });
    expect(response.status).toBe(400);
    expect(response.body).toEqual({ success: false, error: expect.stringMatching(/^id/), error_code: 400 });
  });

  test('a complete path still wins over a shorter one', async () => {
    const response = await service.request('GET', '/lists', { apiKey: account.apiKey });
    expect(response.status).toBe(200);
    expect(Array.isArray(response.body.lists)).toBe(true);
  });
});
