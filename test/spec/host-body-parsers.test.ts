// The router's body limits (8 KB, each parameter once; 16 KB and 20 fields on the page forms) hold whatever parsed the
// body: the same answers with no host parser, a global express.urlencoded({ extended: true, limit: '1mb' }),
// a global express.json(), and both.
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import express from 'express';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FORM_BODY_LIMIT } from '../../src/http/read-form.js';
import { basic, createTestApp, type TestApp } from '../helpers/app.js';
import { authorizeQuery, obtainCode } from '../helpers/browser-flow.js';
import { openLoginForm, redeemCode } from '../helpers/spec-requests.js';
import { listen } from '../helpers/raw-http.js';
import { hostRequest } from '../helpers/host-request.js';

// The last column: the host's parser is an extended (qs) one, which turns `a[]=` and `a[b]=` into arrays and objects.
const HOSTS: ReadonlyArray<readonly [string, express.RequestHandler[], boolean]> = [
  ['no host body parser', [], false],
  ['a global express.urlencoded({ extended: true, limit: \'1mb\' })', [express.urlencoded({ extended: true, limit: '1mb' })], true],
  ['a global express.json()', [express.json()], false],
  ['global express.json() and express.urlencoded({ extended: true })', [express.json(), express.urlencoded({ extended: true, limit: '1mb' })], true],
];
const PADDING = 'a'.repeat(20 * 1024);
/** superagent serializes a form body itself; this sends a (gzip) Buffer as it is. Typed as its string serializer. */
const asIs = ((body: Buffer) => body) as unknown as (body: unknown) => string;

/** The test app behind a host that runs `parsers` first, listening on a port (a chunked body needs a real socket). */
async function listenBehind(parsers: readonly express.RequestHandler[]) {
  const t = await createTestApp();
  const app = express();
  for (const parser of parsers) app.use(parser);
  app.use(t.app);
  const server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  return { t, app, server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

describe.each(HOSTS)('a host with %s', (_name, parsers, extended) => {
  let t: TestApp;
  let app: express.Express;
  let url: string;
  let server: ReturnType<express.Express['listen']>;

  beforeAll(async () => {
    ({ t, app, server, url } = await listenBehind(parsers));
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  const token = (body: string) =>
    request(app).post('/oauth2/token').set('Authorization', basic(t.credentialsClient)).type('form').send(body);

  it('token endpoint: a normal request gets a token', async () => {
    const res = await token('grant_type=client_credentials');
    expect(res.status).toBe(200);
    expect(res.body.access_token).toBeTruthy();
  });

  it('token endpoint: a 20 KB body is refused (400 invalid_request)', async () => {
    const res = await token(`grant_type=client_credentials&padding=${PADDING}`);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: 'invalid_request', error_description: 'request body too large' });
  });

  it('token endpoint: a 20 KB body sent chunked, with no Content-Length, is refused the same way', async () => {
    const body = new TextEncoder().encode(`grant_type=client_credentials&padding=${PADDING}`);
    const res = await fetch(`${url}/oauth2/token`, {
      method: 'POST',
      headers: { Authorization: basic(t.credentialsClient), 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new ReadableStream({ start(controller) { controller.enqueue(body); controller.close(); } }),
      duplex: 'half',
    } as RequestInit);
    expect(res.headers.get('content-length')).not.toBeNull();
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ error: 'invalid_request', error_description: 'request body too large' });
  });

  it('token endpoint: a body just under the limit is read', async () => {
    const base = 'grant_type=client_credentials&padding=';
    const res = await token(`${base}${'a'.repeat(FORM_BODY_LIMIT - base.length)}`);
    expect(res.status).toBe(200);
  });

  it('token endpoint: a repeated parameter is refused (RFC 6749 §3.1)', async () => {
    const res = await token('grant_type=client_credentials&grant_type=client_credentials');
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: 'invalid_request', error_description: 'parameter grant_type is repeated' });
  });

  it('token endpoint: an empty value beside a real one is omitted, whoever parsed the body (RFC 6749 §3.1)', async () => {
    const res = await token('grant_type=&grant_type=client_credentials');
    expect(res.status).toBe(200);
  });

  it('token endpoint: bracketed parameters are never a 500: refused when parsed into arrays or objects, else unknown', async () => {
    // Without grant_type under its plain name, these fail either way.
    for (const body of ['grant_type[]=client_credentials', 'grant_type[x]=client_credentials']) {
      const res = await token(body);
      expect(res.status, body).toBe(400);
      expect(res.body.error, body).toBe('invalid_request');
      // Sent once: an extended parser's one-item array or object is malformed, not "repeated".
      if (extended) expect(res.body.error_description, body).toBe('parameter grant_type is malformed');
    }
    // An extended parser makes `scope[0]=a&scope[1]=b` the same array as `scope=a&scope=b`, a repeated
    // parameter, so it is refused; read by the router it is two unknown parameters, ignored (RFC 6749 §3.1).
    const res = await token('grant_type=client_credentials&scope[0]=a&scope[1]=b');
    expect(res.status).toBe(extended ? 400 : 200);
    if (extended) expect(res.body).toEqual({ error: 'invalid_request', error_description: 'parameter scope is repeated' });
  });

  it('token endpoint: the authorization code flow works end to end', async () => {
    const code = await obtainCode(app, t.codeClient);
    const res = await redeemCode(app, '', t.codeClient, code);
    expect(res.status).toBe(200);
  });

  it('token and revocation endpoints: a gzip body is refused (400 invalid_request), even where the host parser inflated it', async () => {
    const body = gzipSync('grant_type=client_credentials');
    for (const path of ['/oauth2/token', '/oauth2/revoke']) {
      const res = await request(app).post(path).set('Authorization', basic(t.credentialsClient))
        .set('Content-Type', 'application/x-www-form-urlencoded').set('Content-Encoding', 'gzip').serialize(asIs).send(body);
      expect(res.status, path).toBe(400);
      expect(res.body.error).toBe('invalid_request');
    }
  });

  it('revocation endpoint: a 20 KB body is refused too', async () => {
    const res = await request(app).post('/oauth2/revoke').set('Authorization', basic(t.credentialsClient)).type('form')
      .send(`token=x&padding=${PADDING}`);
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('invalid_request');
  });

  describe('login form', () => {
    const loginFields = async () => {
      const agent = request.agent(app);
      const form = await openLoginForm(agent, '', authorizeQuery(t.codeClient));
      return { agent, fields: `csrf_token=${form.csrfToken}&request_id=${form.requestId}` };
    };

    it('signs in with a normal form', async () => {
      const { agent, fields } = await loginFields();
      const res = await agent.post('/oauth2/login').type('form').send(`${fields}&username=alice&password=${encodeURIComponent('correct horse battery staple')}`);
      expect(res.status).toBe(303);
    });

    it('refuses a gzip form with a 415 page, even where the host parser inflated it', async () => {
      const { agent, fields } = await loginFields();
      const res = await agent.post('/oauth2/login').set('Content-Type', 'application/x-www-form-urlencoded').set('Content-Encoding', 'gzip')
        .serialize(asIs).send(gzipSync(`${fields}&username=alice&password=${encodeURIComponent('correct horse battery staple')}`));
      expect(res.status).toBe(415);
    });

    it('refuses a 20 KB form with a 413 invalid_request page', async () => {
      const { agent, fields } = await loginFields();
      const res = await agent.post('/oauth2/login').type('form').send(`${fields}&username=${PADDING}&password=x`);
      expect(res.status).toBe(413);
      expect(res.text).toContain('<code>invalid_request</code>');
    });

    it('refuses more than 20 fields', async () => {
      const { agent, fields } = await loginFields();
      const extra = Array.from({ length: 25 }, (_, i) => `f${i}=x`).join('&');
      const res = await agent.post('/oauth2/login').type('form').send(`${fields}&username=alice&password=x&${extra}`);
      expect(res.status).toBe(413);
      expect(res.text).toContain('<code>invalid_request</code>');
    });

    it('refuses a repeated username, which never reaches the password check', async () => {
      const { agent, fields } = await loginFields();
      const res = await agent.post('/oauth2/login').type('form').send(`${fields}&username=alice&username=bob&password=x`);
      expect(res.status).toBe(400);
      expect(res.text).toContain('<code>invalid_request</code>');
    });

    it('never passes a bracketed username on as an array or object', async () => {
      for (const username of ['username[]=alice', 'username[a]=alice']) {
        const { agent, fields } = await loginFields();
        const res = await agent.post('/oauth2/login').type('form').send(`${fields}&${username}&password=x`);
        // Parsed into an array or object: refused; read by the router: an unknown field, so no username.
        expect(res.status, username).toBe(extended ? 400 : 400);
        expect(res.text, username).toContain(extended ? '<code>invalid_request</code>' : 'The username or password is incorrect.');
      }
    });

    it('sees no fields in a JSON body, as the router\'s own parser would not', async () => {
      const agent = request.agent(app);
      const form = await openLoginForm(agent, '', authorizeQuery(t.codeClient));
      const res = await agent.post('/oauth2/login').type('json')
        .send({ csrf_token: form.csrfToken, request_id: form.requestId, username: 'alice', password: 'correct horse battery staple' });
      expect(res.status).toBe(403);
    });
  });
});

describe('oauth.errorHandler: what a host parser refused on the router\'s addresses is answered the router\'s way', () => {
  async function createHost(withOAuthErrors: boolean, consentsPage = true) {
    const { createTestRouter } = await import('../helpers/app.js');
    const { createMemoryStore } = await import('../../src/stores/memory/index.js');
    const oauth = createTestRouter(createMemoryStore(), { legacy: { issuer: 'http://auth.test/legacy' }, consentsPage });
    const app = express();
    // A host's own refusal before its parsers: a 403 of its access control, with no body-parser type.
    app.use('/oauth2/token', (req, _res, next) => { next(req.headers['x-blocked'] ? Object.assign(new Error('blocked'), { status: 403 }) : undefined); });
    app.use(express.json({ limit: '1kb' }));
    app.use(express.urlencoded({ extended: false, limit: '1kb' }));
    app.use(oauth.router);
    app.post('/api/v1/envelopes', (_req, res) => { res.json({ ok: true }); });
    if (withOAuthErrors) app.use(oauth.errorHandler);
    // A naive host handler, as many apps have: HTML with the error's stack.
    app.use((err: Error, _req: express.Request, res: express.Response, _next: express.NextFunction) => {
      res.status(500).type('html').send(`<pre>${err.stack}</pre>`);
    });
    return app;
  }

  it('malformed JSON and a body over the host\'s limit at the token, revocation and introspection endpoints: 400 invalid_request JSON', async () => {
    const app = await createHost(true);
    for (const path of ['/oauth2/token', '/oauth2/revoke', '/oauth2/introspect', '/legacy/oauth2/token', '/OAuth2/Token/']) {
      const malformed = await request(app).post(path).set('Content-Type', 'application/json').send('{"grant_type":');
      expect(malformed.status, path).toBe(400);
      expect(malformed.body, path).toEqual({ error: 'invalid_request', error_description: 'request body could not be read' });
      expect(malformed.headers['cache-control'], path).toBe('no-cache, no-store, max-age=0, must-revalidate');
      const large = await request(app).post(path).type('form').send(`grant_type=client_credentials&padding=${'a'.repeat(2048)}`);
      expect(large.status, path).toBe(400);
      expect(large.body, path).toEqual({ error: 'invalid_request', error_description: 'request body too large' });
    }
  });

  it('a body that does not inflate (Content-Encoding: gzip, not gzip): 400 invalid_request JSON, the 415 page on a form', async () => {
    const app = await createHost(true);
    const garbage = Buffer.from('not gzip at all');
    const token = await request(app).post('/oauth2/token').set('Content-Type', 'application/x-www-form-urlencoded')
      .set('Content-Encoding', 'gzip').serialize(asIs).send(garbage);
    expect(token.status).toBe(400);
    expect(token.body).toEqual({ error: 'invalid_request', error_description: 'Content-Encoding is not supported' });
    const login = await request(app).post('/oauth2/login').set('Content-Type', 'application/x-www-form-urlencoded')
      .set('Content-Encoding', 'gzip').serialize(asIs).send(garbage);
    expect(login.status).toBe(415);
    expect(login.text).not.toContain('<pre>');
  });

  it('a login form in a charset the host parser does not read: the 415 page, no stack trace', async () => {
    const app = await createHost(true);
    const res = await request(app).post('/oauth2/login').set('Content-Type', 'application/x-www-form-urlencoded; charset=utf-16').send('a=b');
    expect(res.status).toBe(415);
    expect(res.text).toContain('The form was sent in an encoding this page does not read.');
    expect(res.text).not.toContain('at ');
    expect(res.headers['x-frame-options']).toBe('DENY');
  });

  it('passes on what is no body-parser refusal (a host\'s 403), and refusals on paths the router does not route', async () => {
    const app = await createHost(true);
    const blocked = await request(app).post('/oauth2/token').set('X-Blocked', '1').type('form').send('grant_type=client_credentials');
    expect(blocked.status).toBe(500);
    expect(blocked.text).toContain('<pre>Error: blocked');
    // Paths Express does not route to the token endpoint (dot segments, encoded dots, a doubled slash): the host's
    // handler, as for any other route. (A wrong method on the router's own paths is its 405: see below.)
    for (const path of ['/oauth2/./token', '/oauth2/x/../token', '/oauth2/%2e/token', '//evil/oauth2/token']) {
      const res = await request(app).post(path).set('Content-Type', 'application/json').send('{');
      expect(res.text, path).toContain('<pre>');
    }
    const withoutConsents = await createHost(true, false);
    const consents = await request(withoutConsents).post('/oauth2/consents/withdraw').type('form').send(`a=${'b'.repeat(2048)}`);
    expect(consents.text).toContain('<pre>');
  });

  it('passes on errors of the host\'s own routes, and every error when not mounted (the host\'s format, as before)', async () => {
    const app = await createHost(true);
    const own = await request(app).post('/api/v1/envelopes').set('Content-Type', 'application/json').send('{');
    expect(own.status).toBe(500);
    expect(own.text).toContain('<pre>');
    const without = await createHost(false);
    const token = await request(without).post('/oauth2/token').set('Content-Type', 'application/json').send('{');
    expect(token.status).toBe(500);
    expect(token.text).toContain('<pre>');
  });
});

describe('oauth.errorHandler called as plain middleware (NestJS MiddlewareConsumer.apply passes req, res, next)', () => {
  it('passes every request on, never a 500, and logs once how to mount it', async () => {
    const { createTestRouter } = await import('../helpers/app.js');
    const { createMemoryStore } = await import('../../src/stores/memory/index.js');
    const errors: string[] = [];
    const oauth = createTestRouter(createMemoryStore(), { logger: { warn() {}, error(message: string) { errors.push(message); } } });
    const app = express();
    // What Nest's consumer.apply(oauth.errorHandler).forRoutes('/') does: calls it with three arguments on every request.
    app.use((req, res, next) => { (oauth.errorHandler as unknown as express.RequestHandler)(req, res, next); });
    app.use(oauth.router);
    app.get('/api/v1/ping', (_req, res) => { res.json({ ok: true }); });
    for (let i = 0; i < 2; i++) {
      expect((await request(app).get('/api/v1/ping')).body).toEqual({ ok: true });
      const token = await request(app).post('/oauth2/token').type('form').send('grant_type=client_credentials');
      expect(token.status).toBe(401);
      expect(token.body.error).toBe('invalid_client');
    }
    expect(errors).toHaveLength(1);
    expect(errors[0]).toContain('app.use(oauth.errorHandler)');
  });
});

describe('a host parser that lets through more fields than the call stack holds (parameterLimit raised)', () => {
  // 150,000 `a[kN]=1` fields make one object of 150,000 entries: spread into one call's arguments while the router
  // measured the body, they overflowed V8's stack (RangeError, a 500). Sent chunked, so no Content-Length refuses it first.
  const FIELDS = 150_000;
  let t: TestApp;
  let url: string;
  let server: ReturnType<express.Express['listen']>;

  beforeAll(async () => {
    ({ t, server, url } = await listenBehind([express.urlencoded({ extended: true, limit: '5mb', parameterLimit: 1_000_000 })]));
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  const chunked = (path: string, text: string, headers: Record<string, string> = {}) => {
    const body = new TextEncoder().encode(text);
    return fetch(`${url}${path}`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', ...headers },
      body: new ReadableStream({ start(controller) { controller.enqueue(body); controller.close(); } }),
      duplex: 'half',
    } as RequestInit);
  };
  const nested = Array.from({ length: FIELDS }, (_, i) => `a[k${i}]=1`).join('&');

  it('token endpoint: a body over the limit whatever its nesting is 400 invalid_request, never a 500', async () => {
    const res = await chunked('/oauth2/token', `grant_type=client_credentials&${nested}`, { Authorization: basic(t.credentialsClient) });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ error: 'invalid_request', error_description: 'request body too large' });
  });

  it('login form: a body over the limit whatever its nesting is 413, never a 500', async () => {
    const res = await chunked('/oauth2/login', nested);
    expect(res.status).toBe(413);
  });
});

describe('oauth.errorHandler behind Express defaults, express.json() and express.urlencoded(): a wrong method is 405 whatever the body', () => {
  let server: Awaited<ReturnType<typeof listen>>;
  let codeClient: { clientId: string; clientSecret: string };

  beforeAll(async () => {
    const { createTestRouter, REDIRECT_URI } = await import('../helpers/app.js');
    const { createMemoryStore } = await import('../../src/stores/memory/index.js');
    const { registerClient } = await import('../../src/clients/register-client.js');
    const store = createMemoryStore();
    const registered = await registerClient(store, { name: 'Acme CRM', flow: 'authorization_code', redirectUris: [REDIRECT_URI] });
    codeClient = { clientId: registered.client.clientId, clientSecret: registered.clientSecret };
    const oauth = createTestRouter(store, { legacy: { issuer: 'http://auth.test/legacy' }, accessTokenFormat: 'jwt' });
    // A host on Express's defaults (X-Powered-By on, Express's own HTML error page): no error handler of its own.
    const app = express();
    app.use(express.json());
    app.use(express.urlencoded());
    app.use(oauth.router);
    app.put('/api/v1/envelopes', (_req, res) => { res.json({ ok: true }); });
    app.use(oauth.errorHandler);
    server = await listen(app);
  });
  afterAll(async () => { await server.close(); });

  /** One request on a connection of its own (`hostRequest`: node:http sends a GET's body too, which fetch refuses to). */
  const send = (method: string, path: string, body?: string, type = 'application/json') =>
    hostRequest(`http://127.0.0.1:${server.port}`, method, path, body, { type, headers: { Host: 'auth.test' } });
  const JSON_ENDPOINTS = ['/oauth2/token', '/oauth2/revoke', '/oauth2/introspect', '/legacy/oauth2/token', '/legacy/oauth2/introspect'];
  const DOCUMENTS = ['/.well-known/oauth-authorization-server', '/.well-known/oauth-authorization-server/legacy',
    '/legacy/.well-known/oauth-authorization-server', '/oauth2/jwks', '/legacy/oauth2/jwks'];

  it('the token, revocation and introspection endpoints, both issuers: another method with malformed JSON is 405, Allow: POST (RFC 9110 §15.5.6)', async () => {
    for (const path of JSON_ENDPOINTS) {
      for (const method of ['PUT', 'PATCH', 'DELETE', 'GET']) {
        const res = await send(method, path, '{x}');
        expect(res.status, `${method} ${path}`).toBe(405);
        expect(res.headers.allow, `${method} ${path}`).toBe('POST');
        expect(res.headers['x-powered-by'], `${method} ${path}`).toBeUndefined();
        expect(JSON.parse(res.text), `${method} ${path}`).toEqual({ error: 'invalid_request', error_description: 'this endpoint accepts only POST' });
      }
    }
  });

  it('the metadata and the JWKS, both issuers: another method with malformed JSON is 405, Allow: GET, HEAD', async () => {
    for (const path of DOCUMENTS) {
      for (const method of ['PUT', 'POST', 'DELETE']) {
        const res = await send(method, path, '{x}');
        expect(res.status, `${method} ${path}`).toBe(405);
        expect(res.headers.allow, `${method} ${path}`).toBe('GET, HEAD');
        expect(res.headers['x-powered-by'], `${method} ${path}`).toBeUndefined();
        expect(JSON.parse(res.text), `${method} ${path}`).toEqual({ error: 'invalid_request', error_description: 'this endpoint accepts only GET and HEAD' });
      }
    }
  });

  it('the metadata and the JWKS: a GET whose body is malformed JSON is sent to itself (303), then gets the document, as a GET without a body (RFC 9110 §9.3.1)', async () => {
    for (const path of DOCUMENTS) {
      const [plain, withBody] = [await send('GET', path), await send('GET', path, '{x}')];
      expect(plain.status, path).toBe(200);
      expect(withBody.status, path).toBe(303);
      expect(withBody.headers.location, path).toBe(path);
      expect(withBody.headers['cache-control'], path).toBe('no-store');
      expect(withBody.headers['access-control-allow-origin'], path).toBe('*');
      expect(withBody.headers['x-powered-by'], path).toBeUndefined();
      const followed = await send('GET', String(withBody.headers.location));
      expect(followed.text, path).toBe(plain.text);
      expect(followed.headers['content-type'], path).toBe(plain.headers['content-type']);
      expect(followed.headers['access-control-allow-origin'], path).toBe('*');
    }
  });

  it('the authorization endpoint and the connected-applications page: a GET whose body the host parser refused is sent to itself (303), answered as the GET without it (RFC 9110 §9.3.1, §15.4.4, RFC 6749 §3.1)', async () => {
    const BODIES = [['{x}', 'application/json'], [`a=${'b'.repeat(200 * 1024)}`, 'application/x-www-form-urlencoded']] as const;
    const pages = [`/oauth2/authorize?${authorizeQuery(codeClient)}`, `/oauth2/authorize?${authorizeQuery(codeClient, { scope: 'nonsense' })}`,
      '/oauth2/authorize?client_id=unknown', '/oauth2/consents', '/legacy/oauth2/consents'];
    for (const path of pages) {
      const plain = await send('GET', path);
      expect(plain.status, path).toBeLessThan(500);
      for (const [body, type] of BODIES) {
        // Sent to the same address again, which every client follows as a GET without the body: the same page then.
        const withBody = await send('GET', path, body, type);
        expect(withBody.status, `${type} ${path}`).toBe(303);
        expect(withBody.headers.location, `${type} ${path}`).toBe(path);
        expect(withBody.headers['cache-control'], `${type} ${path}`).toBe('no-store');
        expect(withBody.headers['x-powered-by'], `${type} ${path}`).toBeUndefined();
        const followed = await send('GET', String(withBody.headers.location));
        expect(followed.status, `${type} ${path}`).toBe(plain.status);
        expect(followed.headers.location, `${type} ${path}`).toBe(plain.headers.location);
        // The same page: the login form of this request, or the same error, less its per-request tokens.
        const page = (text: string) => text.replace(/(value|nonce)="[^"]*"/g, '$1=""');
        expect(page(followed.text), `${type} ${path}`).toBe(page(plain.text));
      }
    }
  });

  it('HEAD with a body the host parser refused: the authorization endpoint\'s 405 (Allow: GET) at once, as without it; the connected-applications page sent to itself (303)', async () => {
    const authorize = `/oauth2/authorize?${authorizeQuery(codeClient)}`;
    const plain = await send('HEAD', authorize);
    expect(plain.status).toBe(405);
    const withBody = await send('HEAD', authorize, '{x}', 'application/json');
    expect(withBody.status, 'the method is wrong whatever the body').toBe(405);
    expect(withBody.headers.allow).toBe(plain.headers.allow);
    const consents = await send('HEAD', '/oauth2/consents', '{x}', 'application/json');
    expect(consents.status).toBe(303);
    expect(consents.headers.location).toBe('/oauth2/consents');
  });

  it('the forms: another method with malformed JSON or a form over the host\'s limit is the 405 page, Allow: POST', async () => {
    for (const path of ['/oauth2/login', '/oauth2/consent', '/legacy/oauth2/logout']) {
      for (const [body, type] of [['{x}', 'application/json'], [`a=${'b'.repeat(200 * 1024)}`, 'application/x-www-form-urlencoded']] as const) {
        const res = await send('PUT', path, body, type);
        expect(res.status, `${type} ${path}`).toBe(405);
        expect(res.headers.allow, `${type} ${path}`).toBe('POST');
        expect(res.headers['x-frame-options'], `${type} ${path}`).toBe('DENY');
        expect(res.headers['x-powered-by'], `${type} ${path}`).toBeUndefined();
      }
    }
    const authorize = await send('POST', '/oauth2/authorize', '{x}');
    expect(authorize.status).toBe(405);
    expect(authorize.headers.allow).toBe('GET');
  });

  it('leaves the host\'s own routes and paths the router does not route to the host (Express\'s 400 page, X-Powered-By)', async () => {
    for (const path of ['/api/v1/envelopes', '/oauth2/tokens', '/.well-known/oauth-authorization-server/other']) {
      const res = await send('PUT', path, '{x}');
      expect(res.status, path).toBe(400);
      expect(res.headers['content-type'], path).toMatch(/^text\/html/);
      expect(res.headers['x-powered-by'], path).toBe('Express');
    }
  });
});

describe('oauth.errorHandler: a GET page whose body the host parser refused goes through what the host mounts between its parser and the router', () => {
  /** The router behind express.json() and, after it, `between`; a consent-page request of a registered integration. */
  async function hostWith(between: express.RequestHandler[], routerOptions: Record<string, unknown>) {
    const { REDIRECT_URI, ISSUER } = await import('../helpers/app.js');
    const { createMemoryStore } = await import('../../src/stores/memory/index.js');
    const { registerClient } = await import('../../src/clients/register-client.js');
    const { createOAuthRouter } = await import('../../src/router.js');
    const { hostSessionUserAuth } = await import('../helpers/host-login.js');
    const store = createMemoryStore();
    const registered = await registerClient(store, { name: 'Internal Payroll', flow: 'authorization_code', redirectUris: [REDIRECT_URI] });
    const errors: string[] = [];
    const oauth = createOAuthRouter(store, hostSessionUserAuth(), {
      issuer: ISSUER, logger: { warn() {}, error: (line: string) => { errors.push(line); } }, ...routerOptions,
    });
    const app = express();
    app.use(express.json());
    for (const handler of between) app.use(handler);
    app.use(oauth.router);
    app.use(oauth.errorHandler);
    const server = await listen(app);
    const path = `/oauth2/authorize?${authorizeQuery({ clientId: registered.client.clientId, clientSecret: registered.clientSecret })}`;
    const send = (method: string, target: string, body?: string) => hostRequest(`http://127.0.0.1:${server.port}`, method, target, body,
      { type: 'application/json', headers: { Host: 'auth.test' } });
    return { server, path, send, errors };
  }

  it('a host\'s gate (an address allowlist) is not passed by a malformed body: the GET is sent to itself, and meets the gate', async () => {
    const gate: express.RequestHandler = (_req, res) => { res.status(403).send('office network only'); };
    const { server, path, send } = await hostWith([gate], { session: { secret: 'test-session-secret-0123456789' } });
    try {
      for (const target of [path, '/oauth2/consents']) {
        expect((await send('GET', target)).status, target).toBe(403);
        const withBody = await send('GET', target, '{x}');
        expect(withBody.text, target).not.toContain('Internal Payroll');
        expect(withBody.status, target).toBe(303);
        expect(withBody.headers.location, target).toBe(target);
        expect((await send('GET', String(withBody.headers.location))).status, target).toBe(403);
      }
    } finally {
      await server.close();
    }
  });

  it('a host\'s gate (an address allowlist) keeps the metadata and the JWKS behind it too: a GET or HEAD with a malformed body is sent to itself (303), and meets the gate', async () => {
    const gate: express.RequestHandler = (_req, res) => { res.status(403).send('office network only'); };
    const { server, send } = await hostWith([gate], { session: { secret: 'test-session-secret-0123456789' }, accessTokenFormat: 'jwt' });
    try {
      for (const target of ['/.well-known/oauth-authorization-server', '/oauth2/jwks']) {
        expect((await send('GET', target)).status, target).toBe(403);
        for (const method of ['GET', 'HEAD']) {
          const withBody = await send(method, target, '{x}');
          expect(withBody.text, `${method} ${target}`).not.toContain('authorization_endpoint');
          expect(withBody.text, `${method} ${target}`).not.toContain('"keys"');
          expect(withBody.status, `${method} ${target}`).toBe(303);
          expect(withBody.headers.location, `${method} ${target}`).toBe(target);
          expect((await send(method, String(withBody.headers.location))).status, `${method} ${target}`).toBe(403);
        }
        // Another method is still the document's 405 at once: it says nothing the gate keeps.
        expect((await send('PUT', target, '{x}')).status, target).toBe(405);
      }
    } finally {
      await server.close();
    }
  });

  it('session.hostSession: true, the host\'s express-session after the parser (the usual order): no 500, and no log that the session is mounted after the router', async () => {
    const session = (await import('express-session')).default;
    const hostSession = session({ secret: 'host-session-secret-0123456789', resave: false, saveUninitialized: false });
    const { server, path, send, errors } = await hostWith([hostSession], { session: { hostSession: true } });
    try {
      const plain = await send('GET', path);
      expect(plain.status).toBe(303);
      const withBody = await send('GET', path, '{x}');
      expect(withBody.status).toBe(303);
      expect(withBody.headers.location).toBe(path);
      const followed = await send('GET', String(withBody.headers.location));
      expect(followed.status).toBe(plain.status);
      expect(followed.headers.location).toBe(plain.headers.location);
      // Another method is the route's 405 as before, whatever the body (the authorization endpoint serves GET alone).
      expect((await send('PUT', path, '{x}')).status).toBe(405);
      expect(errors, 'the session is mounted before the router: nothing says otherwise').toEqual([]);
    } finally {
      await server.close();
    }
  });
});
