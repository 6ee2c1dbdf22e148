// A body refused as too large is answered after it has arrived, as a reverse proxy that buffered it (nginx) sends it.
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { basic, createTestApp, type TestApp } from '../helpers/app.js';
import { listen, openConnection } from '../helpers/raw-http.js';

/** What a proxy writing a buffered body whole (nginx: Content-Length, then the bytes) sees of the answer. */
interface ProxiedAnswer {
  /** Some of the answer came, or the connection closed, before the proxy had written the whole body. */
  readonly answeredEarly: boolean;
  /** A write error (EPIPE, ECONNRESET): nginx then answers 502 in place of the upstream's answer. */
  readonly writeError: string | null;
  readonly statusLine: string;
}

/** Sends `head` and the first `firstBytes` of a `length`-byte body, waits `pauseMs`, then the rest, like a proxy. */
function sendAsProxy(port: number, head: string, length: number, firstBytes: number, pauseMs: number): Promise<ProxiedAnswer> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    let received = '';
    let answeredEarly: boolean | null = null;
    let writeError: string | null = null;
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => { received += chunk; });
    socket.on('error', (err: NodeJS.ErrnoException) => { writeError ??= err.code ?? err.message; });
    socket.on('close', () => resolve({ answeredEarly: answeredEarly ?? true, writeError, statusLine: received.split('\r\n')[0]! }));
    socket.write(`${head}\r\nContent-Length: ${length}\r\n\r\n${'a'.repeat(firstBytes)}`);
    setTimeout(() => {
      answeredEarly = received.length > 0 || socket.destroyed;
      if (socket.destroyed) return;
      socket.write('a'.repeat(length - firstBytes), () => socket.end());
    }, pauseMs);
  });
}

describe('a body refused as too large, sent as a reverse proxy sends it (RFC 9112 §9.6)', () => {
  let t: TestApp;
  let server: Awaited<ReturnType<typeof listen>>;

  beforeAll(async () => {
    t = await createTestApp({ loginRateLimit: false, clientAuthRateLimit: false });
    server = await listen(t.app);
  });
  afterAll(async () => { await server.close(); });

  // nginx passes bodies up to its client_max_body_size (1 MiB by default), buffered, with a Content-Length, and
  // reads the answer once it has written them. Answered and closed while the body still arrived, the socket was
  // reset: nginx logged "writev() failed (32: Broken pipe) while sending request to upstream" and answered 502.
  it.each([
    ['the token endpoint', `POST /oauth2/token HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/x-www-form-urlencoded\r\nAuthorization: `, '400'],
    ['the login form', 'POST /oauth2/login HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/x-www-form-urlencoded', '413'],
  ])('%s answers once the whole body has arrived, and the proxy writing it gets no reset', async (_name, head, status) => {
    const fullHead = head.endsWith('Authorization: ') ? `${head}${basic(t.credentialsClient)}` : head;
    const answer = await sendAsProxy(server.port, fullHead, 40_000, 20_000, 300);
    expect(answer.answeredEarly).toBe(false);
    expect(answer.writeError).toBeNull();
    expect(answer.statusLine).toBe(`HTTP/1.1 ${status} ${status === '400' ? 'Bad Request' : 'Payload Too Large'}`);
  });

  it('a declared length over 1 MiB is still answered at once, without reading it', async () => {
    const head = `POST /oauth2/token HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/x-www-form-urlencoded\r\nAuthorization: ${basic(t.credentialsClient)}`;
    const answer = await sendAsProxy(server.port, head, 2 * 1024 * 1024, 1000, 300);
    expect(answer.answeredEarly).toBe(true);
    expect(answer.statusLine).toBe('HTTP/1.1 400 Bad Request');
  });
});

// A 405 is answered without reading the body, as the router never reads a wrong method's body (RFC 9110 §9.3.1).
// Node's HTTP server then reads and discards it itself once the answer is sent (what it does for any body a handler
// leaves unread), so the connection stays usable: the next request on it is answered, framed by the body's own length,
// and a proxy still writing the body gets no reset. Pinned here, as the 413/415 answers drain it themselves.
describe('a wrong method\'s body is discarded, and the kept-alive connection goes on (RFC 9112 §9.3, §6.3)', () => {
  let server: Awaited<ReturnType<typeof listen>>;

  beforeAll(async () => {
    server = await listen((await createTestApp({ accessTokenFormat: 'jwt' })).app);
  });
  afterAll(async () => { await server.close(); });

  const NEXT = 'GET /.well-known/oauth-authorization-server HTTP/1.1\r\nHost: localhost\r\n\r\n';
  const MIB = 1024 * 1024;

  it.each([
    ['PUT /oauth2/token', 'application/x-www-form-urlencoded'],
    ['GET /oauth2/revoke', 'application/x-www-form-urlencoded'],
    ['DELETE /oauth2/introspect', 'application/x-www-form-urlencoded'],
    ['PUT /oauth2/jwks', 'application/json'],
    ['POST /.well-known/oauth-authorization-server', 'application/json'],
  ])('%s with a 1 MiB body, then a GET pipelined after it: 405, then the metadata, on the same connection', async (line, type) => {
    for (const framing of ['length', 'chunked'] as const) {
      const connection = await openConnection(server.port);
      const body = framing === 'length' ? `Content-Length: ${MIB}\r\n\r\n${'a'.repeat(MIB)}` : `Transfer-Encoding: chunked\r\n\r\n${MIB.toString(16)}\r\n${'a'.repeat(MIB)}\r\n0\r\n\r\n`;
      connection.send(`${line} HTTP/1.1\r\nHost: localhost\r\nContent-Type: ${type}\r\n${body}${NEXT}`);
      const { statusLines, text } = await connection.responses(2);
      connection.close();
      expect(statusLines, `${line}, ${framing}`).toEqual(['HTTP/1.1 405 Method Not Allowed', 'HTTP/1.1 200 OK']);
      expect(text).not.toMatch(/\r\nconnection: *close/i);
      expect(text).toContain('"issuer":');
    }
  });

  it('a proxy writing the body after a pause gets the 405 early, yet no reset: the rest is read, not refused', async () => {
    const answer = await sendAsProxy(server.port, 'PUT /oauth2/token HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/x-www-form-urlencoded', 40_000, 20_000, 300);
    expect(answer.answeredEarly).toBe(true);
    expect(answer.writeError).toBeNull();
    expect(answer.statusLine).toBe('HTTP/1.1 405 Method Not Allowed');
  });
});
