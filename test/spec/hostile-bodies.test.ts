// Bodies and headers the router does not read: a charset or Content-Encoding it does not decode, a body that
// stops half-way, two Authorization headers. Each is refused with a 4xx and its reason, never a 5xx or a wait.
import { gzipSync } from 'node:zlib';
import express from 'express';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerClient } from '../../src/clients/register-client.js';
import { basic, createTestApp, createTestRouter, type TestApp, type TestClient } from '../helpers/app.js';
import { clientCredentialsToken } from '../helpers/token-requests.js';
import { listen, openConnection, rawRequest } from '../helpers/raw-http.js';

const FORM = 'application/x-www-form-urlencoded';
const ENDPOINTS = ['/oauth2/token', '/oauth2/revoke', '/oauth2/introspect'] as const;
const PAGE_FORMS = ['/oauth2/login', '/oauth2/consent', '/oauth2/consents/withdraw'] as const;

/** A valid body for each endpoint, from the client-credentials integration. */
function bodyFor(path: (typeof ENDPOINTS)[number]): string {
  return path === '/oauth2/token' ? 'grant_type=client_credentials' : 'token=some-token';
}

describe('hostile bodies and headers', () => {
  let t: TestApp;
  let server: Awaited<ReturnType<typeof listen>>;
  const logged: string[] = [];

  beforeAll(async () => {
    t = await createTestApp({
      loginRateLimit: false,
      clientAuthRateLimit: false,
      bodyTimeout: 1,
      logger: { warn: () => {}, error: (line: string) => { logged.push(line); } },
    });
    server = await listen(t.app);
  });
  /** POSTs raw bytes over real HTTP (supertest would re-encode a Buffer as a form of its own). */
  async function post(path: string, headers: Record<string, string>, body: Buffer | string): Promise<{ status: number; body: unknown; text: string }> {
    const res = await fetch(`http://127.0.0.1:${server.port}${path}`, { method: 'POST', headers, body });
    const text = await res.text();
    let json: unknown = null;
    try { json = JSON.parse(text); } catch { /* a page */ }
    return { status: res.status, body: json, text };
  }

  afterAll(async () => {
    await server.close();
    // Nothing above was an unexpected condition on the server's side.
    expect(logged).toEqual([]);
  });

  describe('token, revocation and introspection: what is not decoded is refused with 400 invalid_request (RFC 6749 §5.2)', () => {
    it.each(ENDPOINTS)('%s refuses charset=utf-16 and charset=us-ascii', async (path) => {
      for (const charset of ['utf-16', 'UTF-16LE', 'us-ascii']) {
        const res = await post(path, { Authorization: basic(t.credentialsClient), 'Content-Type': `${FORM}; charset=${charset}` },
          Buffer.from(bodyFor(path), /16/.test(charset) ? 'utf16le' : 'latin1'));
        expect(res.status, charset).toBe(400);
        expect(res.body).toEqual({ error: 'invalid_request', error_description: 'the charset of the request body is not supported; use UTF-8' });
      }
    });

    it.each(ENDPOINTS)('%s refuses a gzip, deflate or unknown Content-Encoding, whatever the body', async (path) => {
      for (const encoding of ['gzip', 'deflate', 'br', 'x-custom']) {
        const res = await post(path, { Authorization: basic(t.credentialsClient), 'Content-Type': FORM, 'Content-Encoding': encoding },
          encoding === 'gzip' ? gzipSync(bodyFor(path)) : bodyFor(path));
        expect(res.status, encoding).toBe(400);
        expect(res.body).toEqual({ error: 'invalid_request', error_description: 'Content-Encoding is not supported; send the body uncompressed' });
      }
    });

    it.each(ENDPOINTS)('%s refuses a transfer coding other than chunked (RFC 9112 §6.1), and reads a chunked body', async (path) => {
      const chunked = (body: Buffer | string): string => `${Buffer.byteLength(body).toString(16)}\r\n${Buffer.from(body).toString('latin1')}\r\n0\r\n\r\n`;
      const head = (codings: string): string => [
        `POST ${path} HTTP/1.1`, 'Host: auth.test', `Authorization: ${basic(t.credentialsClient)}`, `Content-Type: ${FORM}`,
        `Transfer-Encoding: ${codings}`, 'Connection: close',
      ].join('\r\n');
      // Node removes only the chunked framing: the gzip bytes would otherwise be read as the form.
      for (const codings of ['gzip, chunked', 'x-custom, chunked', 'GZIP,chunked']) {
        const res = await rawRequest(server.port, head(codings), chunked(codings.startsWith('x') ? bodyFor(path) : gzipSync(bodyFor(path))), { keepOpen: true });
        expect(res.status, codings).toBe(400);
        expect(JSON.parse(res.body), codings).toEqual({ error: 'invalid_request', error_description: 'Transfer-Encoding other than chunked is not supported' });
      }
      const plain = await rawRequest(server.port, head('chunked'), chunked(bodyFor(path)), { keepOpen: true });
      expect(plain.status).toBe(200);
    });

    it('accepts charset=UTF-8 (any case, quoted or not) and Content-Encoding: identity', async () => {
      for (const type of [`${FORM};charset=UTF-8`, `${FORM}; charset="utf-8"`, FORM]) {
        const res = await request(t.app).post('/oauth2/token').set('Authorization', basic(t.credentialsClient))
          .set('Content-Type', type).set('Content-Encoding', 'identity').send('grant_type=client_credentials');
        expect(res.status, type).toBe(200);
      }
    });

    it('decodes charset=ISO-8859-1 as ISO-8859-1 (Java\'s Apache HttpClient default): %E9 is é', async () => {
      // An id outside VSCHAR, which registration refuses now (RFC 6749 Appendix A.1): one stored before still works.
      const { client: registered, clientSecret } = await registerClient(t.store, { clientId: 'cafe-sync', name: 'Café', flow: 'client_credentials' });
      const client = { ...registered, clientId: 'café-sync' };
      await t.store.clients.createClient!(client);
      const latin1 = `grant_type=client_credentials&client_id=caf%E9-sync&client_secret=${clientSecret}`;
      const res = await post('/oauth2/token', { 'Content-Type': `${FORM}; charset=ISO-8859-1` }, Buffer.from(latin1, 'latin1'));
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      // The same bytes declared UTF-8 name another (unknown) client: %E9 alone is no UTF-8.
      const utf8 = await post('/oauth2/token', { 'Content-Type': FORM }, latin1);
      expect(utf8.status).toBe(401);
      expect(client.clientId).toBe('café-sync');
    });
  });

  describe('a body is not a query string: a leading ? is part of the first name (WHATWG URL §5.1)', () => {
    it('a body ?grant_type=client_credentials has no grant_type: 400 invalid_request, in UTF-8 and in ISO-8859-1', async () => {
      for (const type of [FORM, `${FORM}; charset=ISO-8859-1`]) {
        const res = await post('/oauth2/token', { Authorization: basic(t.credentialsClient), 'Content-Type': type }, '?grant_type=client_credentials');
        expect(res.status, type).toBe(400);
        expect(res.body).toEqual({ error: 'invalid_request', error_description: 'missing required parameter: grant_type' });
      }
    });

    it('the same body read by the host\'s express.text() first is refused the same way', async () => {
      const host = express();
      host.use(express.text({ type: FORM }));
      host.use(createTestRouter(t.store, { clientAuthRateLimit: false }).router);
      const res = await request(host).post('/oauth2/token').set('Authorization', basic(t.credentialsClient))
        .set('Content-Type', FORM).send('?grant_type=client_credentials');
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error: 'invalid_request', error_description: 'missing required parameter: grant_type' });
    });
  });

  describe('a body that stops half-way is answered 408 within bodyTimeout, and its connection closed', () => {
    it.each(ENDPOINTS)('%s', async (path) => {
      const body = bodyFor(path);
      const res = await rawRequest(server.port, [
        `POST ${path} HTTP/1.1`, 'Host: auth.test', `Authorization: ${basic(t.credentialsClient)}`,
        `Content-Type: ${FORM}`, `Content-Length: ${body.length + 40}`,
      ].join('\r\n'), body, { keepOpen: true });
      expect(res.status).toBe(408);
      expect(JSON.parse(res.body)).toEqual({ error: 'invalid_request', error_description: 'the request body did not arrive in time' });
      expect(res.headers).toContainEqual(['connection', 'close']);
      expect(res.closedByServer).toBe(true);
    });

    it.each(PAGE_FORMS)('the %s form', async (path) => {
      const res = await rawRequest(server.port, [
        `POST ${path} HTTP/1.1`, 'Host: auth.test', `Content-Type: ${FORM}`, 'Content-Length: 100',
      ].join('\r\n'), 'csrf_token=abc&username=al', { keepOpen: true });
      expect(res.status).toBe(408);
      expect(res.body).toContain('<code>invalid_request</code>');
      expect(res.closedByServer).toBe(true);
    });

    it.each(ENDPOINTS)('%s reads a body whose second half arrives after the request was dispatched to it', async (path) => {
      // A host layer in front of the router says when the request reached it: the rest is written only then, so
      // the router cannot have found the body complete with the headers and must wait for it to arrive.
      let dispatched!: () => void;
      const reached = new Promise<void>((resolve) => { dispatched = resolve; });
      const host = express();
      host.use((_req, _res, next) => { dispatched(); next(); });
      host.use(t.app);
      const split = await listen(host);
      try {
        const body = bodyFor(path);
        const res = await rawRequest(split.port, [
          `POST ${path} HTTP/1.1`, 'Host: auth.test', `Authorization: ${basic(t.credentialsClient)}`,
          `Content-Type: ${FORM}`, `Content-Length: ${body.length}`,
        ].join('\r\n'), body.slice(0, 5), { keepOpen: true, later: { when: reached, data: body.slice(5) } });
        expect(res.status).toBe(200);
        if (path === '/oauth2/token') expect(JSON.parse(res.body).access_token).toBeTruthy();
        else if (path === '/oauth2/introspect') expect(JSON.parse(res.body)).toEqual({ active: false });
        else expect(JSON.parse(res.body)).toEqual({});
      } finally {
        await split.close();
      }
    });

    it('bodies sent with their headers are read at once, and the connection goes on to the next request, pipelined or not', async () => {
      const body = bodyFor('/oauth2/token');
      const one = [
        'POST /oauth2/token HTTP/1.1', 'Host: auth.test', `Authorization: ${basic(t.credentialsClient)}`,
        `Content-Type: ${FORM}`, `Content-Length: ${body.length}`, '', body,
      ].join('\r\n');
      const connection = await openConnection(server.port);
      try {
        connection.send(one);
        await connection.responses(1);
        connection.send(one + one); // two requests in one write
        const { statusLines, text } = await connection.responses(3);
        expect(statusLines).toEqual(['HTTP/1.1 200 OK', 'HTTP/1.1 200 OK', 'HTTP/1.1 200 OK']);
        expect(text.match(/"access_token":"[^"]+"/g)).toHaveLength(3);
      } finally {
        connection.close();
      }
    });

    it('a body that arrives in full before the deadline is read as usual on the same kind of socket', async () => {
      const body = 'grant_type=client_credentials';
      const res = await rawRequest(server.port, [
        'POST /oauth2/token HTTP/1.1', 'Host: auth.test', `Authorization: ${basic(t.credentialsClient)}`,
        `Content-Type: ${FORM}`, `Content-Length: ${body.length}`,
      ].join('\r\n'), body, { keepOpen: true });
      expect(res.status).toBe(200);
      expect(JSON.parse(res.body).access_token).toBeTruthy();
    });
  });

  describe('the login, consent and withdraw forms answer with the HTTP status of the problem, as a page', () => {
    it.each(PAGE_FORMS)('%s: 413 for a body over 16 KB or over 20 fields', async (path) => {
      const large = await request(t.app).post(path).type('form').send(`username=${'a'.repeat(20 * 1024)}`);
      expect(large.status).toBe(413);
      expect(large.text).toContain('<code>invalid_request</code>');
      const many = await request(t.app).post(path).type('form').send(Array.from({ length: 25 }, (_, i) => `f${i}=x`).join('&'));
      expect(many.status).toBe(413);
    });

    it.each(PAGE_FORMS)('%s: 413 on a Content-Length over 16 KB before any of the body arrives, not 408 once the deadline ends', async (path) => {
      const res = await rawRequest(server.port, [
        `POST ${path} HTTP/1.1`, 'Host: auth.test', `Content-Type: ${FORM}`, `Content-Length: ${16 * 1024 + 1}`,
      ].join('\r\n'), '', { keepOpen: true });
      expect(res.status).toBe(413);
      expect(res.body).toContain('<code>invalid_request</code>');
    });

    it.each(PAGE_FORMS)('%s: 415 for a charset other than UTF-8 or ISO-8859-1, and for any Content-Encoding', async (path) => {
      const utf16 = await post(path, { 'Content-Type': `${FORM}; charset=utf-16` }, Buffer.from('username=alice', 'utf16le'));
      expect(utf16.status).toBe(415);
      expect(utf16.text).toContain('<code>invalid_request</code>');
      const gzip = await post(path, { 'Content-Type': FORM, 'Content-Encoding': 'gzip' }, gzipSync('username=alice'));
      expect(gzip.status).toBe(415);
      const unknown = await post(path, { 'Content-Type': FORM, 'Content-Encoding': 'x-custom' }, 'username=alice');
      expect(unknown.status).toBe(415);
    });

    it.each(PAGE_FORMS)('%s: 501 for a transfer coding other than chunked (RFC 9112 §6.1)', async (path) => {
      const res = await rawRequest(server.port, [
        `POST ${path} HTTP/1.1`, 'Host: auth.test', `Content-Type: ${FORM}`, 'Transfer-Encoding: gzip, chunked', 'Connection: close',
      ].join('\r\n'), (() => { const gz = gzipSync('username=alice'); return `${gz.length.toString(16)}\r\n${gz.toString('latin1')}\r\n0\r\n\r\n`; })(), { keepOpen: true });
      expect(res.status).toBe(501);
      expect(res.body).toContain('<code>invalid_request</code>');
    });

    it('pages are never cached, errors included', async () => {
      const res = await request(t.app).post('/oauth2/login').set('Content-Type', `${FORM}; charset=utf-16`).send('x');
      expect(res.headers['cache-control']).toBe('no-store');
    });
  });

  describe('two Authorization headers are refused with 400 invalid_request (RFC 6749 §5.2, RFC 6750 §3.1)', () => {
    let other: TestClient;
    beforeAll(async () => {
      const { client, clientSecret } = await registerClient(t.store, { name: 'Other', flow: 'client_credentials' });
      other = { clientId: client.clientId, clientSecret };
    });

    it.each(ENDPOINTS)('%s, whichever header comes first', async (path) => {
      const body = bodyFor(path);
      for (const [first, second] of [[t.credentialsClient, other], [other, t.credentialsClient]] as const) {
        const res = await rawRequest(server.port, [
          `POST ${path} HTTP/1.1`, 'Host: auth.test', `Authorization: ${basic(first)}`, `authorization: ${basic(second)}`,
          `Content-Type: ${FORM}`, `Content-Length: ${body.length}`, 'Connection: close',
        ].join('\r\n'), body);
        expect(res.status).toBe(400);
        expect(JSON.parse(res.body)).toEqual({ error: 'invalid_request', error_description: 'the request carries more than one Authorization header' });
      }
    });

    it.each(ENDPOINTS)('%s: two Content-Type headers, whichever is first, are 400 invalid_request too (RFC 9110 §5.3)', async (path) => {
      const body = bodyFor(path);
      for (const [first, second] of [[FORM, 'application/json'], ['application/json', FORM], [FORM, FORM]] as const) {
        const res = await rawRequest(server.port, [
          `POST ${path} HTTP/1.1`, 'Host: auth.test', `Authorization: ${basic(t.credentialsClient)}`,
          `Content-Type: ${first}`, `content-type: ${second}`, `Content-Length: ${body.length}`, 'Connection: close',
        ].join('\r\n'), body);
        expect(res.status).toBe(400);
        expect(JSON.parse(res.body)).toEqual({ error: 'invalid_request', error_description: 'the request carries more than one Content-Type header' });
      }
    });

    it('requireBearer: two Bearer headers, even both valid, are 400 with a Bearer challenge', async () => {
      const token = await clientCredentialsToken(t.app, t.credentialsClient);
      const res = await rawRequest(server.port, [
        'GET /api/v1/me HTTP/1.1', 'Host: auth.test', `Authorization: Bearer ${token}`, 'Authorization: Bearer other', 'Connection: close',
      ].join('\r\n'));
      expect(res.status).toBe(400);
      expect(JSON.parse(res.body)).toEqual({ error: 'invalid_request', error_description: 'the request carries more than one Authorization header' });
      expect(res.headers.find(([name]) => name === 'www-authenticate')?.[1]).toMatch(/^Bearer realm="[^"]*", error="invalid_request"/);
      const single = await rawRequest(server.port, ['GET /api/v1/me HTTP/1.1', 'Host: auth.test', `Authorization: Bearer ${token}`, 'Connection: close'].join('\r\n'));
      expect(single.status).toBe(200);
    });
  });
});
