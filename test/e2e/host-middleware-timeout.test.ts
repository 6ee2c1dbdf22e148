// A host middleware that answers before the router has (connect-timeout's 503 for a slow request): the router then
// writes nothing and the process keeps running, where its late answer was an unhandled rejection that ends Node, or,
// with Express's own error answer (which waits for the body), made that answer throw once the router had written.
import type { AddressInfo } from 'node:net';
import * as diagnosticsChannel from 'node:diagnostics_channel';
import { EventEmitter, once } from 'node:events';
import http from 'node:http';
import express from 'express';
import session from 'express-session';
import request from 'supertest';
import { Gauge, Registry } from 'prom-client';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { basic, createTestApp, createTestRouter, createTestUserAuth, ISSUER, REDIRECT_URI, USER } from '../helpers/app.js';
import { authorizeQuery, hiddenField, obtainCode, signIn } from '../helpers/browser-flow.js';
import { MemorySessionStore } from '../../src/http/memory-session-store.js';
import { registerClient } from '../../src/clients/register-client.js';
import { createMemoryStore } from '../../src/stores/memory/index.js';
import { createOAuthMetrics } from '../../src/metrics/index.js';
import { createOAuthRouter } from '../../src/router.js';
import { DIAGNOSTICS_CHANNELS, type ErrorAnswerMessage, type TokenRequestMessage } from '../../src/metrics/channels.js';
import type { OAuthEvents } from '../../src/events/oauth-events.js';
import type { TokenRevokedEvent } from '../../src/events/event-types.js';
import type { Store } from '../../src/stores/contract.js';
import type { UserAuth } from '../../src/user-auth.js';
import { builtInStores, withOpenedStore } from '../helpers/built-in-stores.js';
import { gateSaveTokens } from '../helpers/gate-save-tokens.js';
import { CookieBrowser } from '../helpers/cookie-browser.js';
import { HeldSessionStore, type HeldMethod } from '../helpers/held-session-store.js';

const TIMEOUT_MS = 100;

/**
 * Tells `slowPost` that the host's timeout has fired for its request (by its `X-Test-Request` id), so the rest of the
 * body is sent after it, whatever the load: a fixed wait let a late-scheduled server timer lose the race (a 200).
 */
const hostTimeouts = new EventEmitter();
let slowPostCount = 0;

/**
 * What connect-timeout 1.9 (`app.use(timeout('100ms'))`) does, in its own few lines so the package is not a
 * dependency: when the time is up it marks the request and calls `next` once more, with a 503 error, while the
 * route it already passed the request to is still at work.
 */
const connectTimeoutLike: express.RequestHandler = (req, _res, next) => {
  const timer = setTimeout(() => {
    (req as { timedout?: boolean }).timedout = true;
    next(Object.assign(new Error('Response timeout'), { status: 503, code: 'ETIMEDOUT' }));
    const id = req.get('x-test-request');
    if (id) hostTimeouts.emit(id);
  }, TIMEOUT_MS);
  req.once('close', () => clearTimeout(timer));
  next();
};

/** The host's own error handler, as Express's guide writes one. */
const hostErrorHandler: express.ErrorRequestHandler = (err: { status?: number; message: string }, _req, res, next) => {
  if (res.headersSent) {
    next(err);
    return;
  }
  res.status(err.status ?? 500).json({ host: err.message });
};

/** POSTs `body` to `path`, its second half once the host's timeout has fired; the status and body the client got. */
function slowPost(url: string, path: string, body: string, headers: Record<string, string>): Promise<{ status: number; body: string }> {
  const id = `slow-post-${++slowPostCount}`;
  const timedOut = once(hostTimeouts, id);
  return new Promise((resolve, reject) => {
    const req = http.request(`${url}${path}`, {
      method: 'POST',
      headers: { ...headers, 'X-Test-Request': id, 'Content-Type': 'application/x-www-form-urlencoded', 'Content-Length': String(Buffer.byteLength(body)) },
    }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => { text += chunk; });
      res.on('end', () => resolve({ status: res.statusCode!, body: text }));
    });
    req.on('error', reject);
    req.write(body.slice(0, 5));
    void timedOut.then(() => req.end(body.slice(5)));
  });
}

const HOSTS: ReadonlyArray<readonly [string, express.ErrorRequestHandler[], string]> = [
  ['its own error handler', [hostErrorHandler], '{"host":"Response timeout"}'],
  ['Express\'s default error answer', [], 'Response timeout'],
];

describe.each(HOSTS)('a host whose request timeout (connect-timeout) answers before the router, with %s', (_name, handlers, answer) => {
  const rejections: unknown[] = [];
  const errors: string[] = [];
  const onRejection = (reason: unknown): void => { rejections.push(reason); };
  let server: http.Server;
  let url: string;
  let credentials: { clientId: string; clientSecret: string };

  beforeAll(async () => {
    process.on('unhandledRejection', onRejection);
    process.on('uncaughtException', onRejection);
    const store = createMemoryStore();
    const oauth = createTestRouter(store, { logger: { warn() {}, error: (line: string) => { errors.push(line); } } });
    const registered = await registerClient(store, { name: 'Nightly Sync', flow: 'client_credentials', redirectUris: [] });
    credentials = { clientId: registered.client.clientId, clientSecret: registered.clientSecret };
    await registerClient(store, { name: 'Acme CRM', flow: 'authorization_code', redirectUris: [REDIRECT_URI] });
    const app = express();
    app.use(connectTimeoutLike);
    app.use(oauth.router);
    app.use(oauth.errorHandler);
    for (const handler of handlers) app.use(handler);
    server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterEach(() => {
    rejections.length = 0;
    errors.length = 0;
  });
  afterAll(async () => {
    process.off('unhandledRejection', onRejection);
    process.off('uncaughtException', onRejection);
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  /** Long enough for the router to have read the body and tried to answer. */
  const settle = () => new Promise((resolve) => setTimeout(resolve, TIMEOUT_MS * 5));

  it('token endpoint: the client gets the host\'s 503 alone, and the router\'s late answer is no unhandled rejection', async () => {
    const res = await slowPost(url, '/oauth2/token', 'grant_type=client_credentials', { Authorization: basic(credentials) });
    expect(res.status).toBe(503);
    expect(res.body).toContain(answer);
    await settle();
    expect(rejections).toEqual([]);
    expect(errors, 'no "unexpected" error is logged for an answer the host gave').toEqual([]);
  });

  it('token endpoint: a refused request (wrong secret) answered late is no unhandled rejection either', async () => {
    const res = await slowPost(url, '/oauth2/token', 'grant_type=client_credentials', { Authorization: basic({ ...credentials, clientSecret: 'wrong' }) });
    expect(res.status).toBe(503);
    await settle();
    expect(rejections).toEqual([]);
  });

  it('login form: the client gets the host\'s 503 alone, and the router\'s late page is no unhandled rejection', async () => {
    const res = await slowPost(url, '/oauth2/login', 'username=alice&password=x', { Origin: ISSUER });
    expect(res.status).toBe(503);
    expect(res.body).toContain(answer);
    await settle();
    expect(rejections).toEqual([]);
  });
});

describe('a host whose request timeout (connect-timeout) answered a token request before the router read it', () => {
  it('the authorization code the client got the host\'s 503 for is not spent: sent again, it redeems (RFC 6749 §4.1.2)', async () => {
    const t = await createTestApp({ clientAuthRateLimit: false });
    const code = await obtainCode(t.app, t.codeClient);
    // The same store behind a host whose timeout answers first: the client hears 503 and, as told, tries again.
    const app = express();
    app.use(connectTimeoutLike);
    app.use(createTestRouter(t.store, { clientAuthRateLimit: false }).router);
    app.use(hostErrorHandler);
    const server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const exchange = `grant_type=authorization_code&code=${code}&redirect_uri=${encodeURIComponent(REDIRECT_URI)}`;
      const late = await slowPost(url, '/oauth2/token', exchange, { Authorization: basic(t.codeClient) });
      expect(late.status).toBe(503);
      await new Promise((resolve) => setTimeout(resolve, TIMEOUT_MS * 5));
      const again = await postNow(url, exchange, basic(t.codeClient));
      expect(again.status, again.body).toBe(200);
      expect(JSON.parse(again.body).refresh_token).toBeTruthy();
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

/**
 * connect-timeout as it times a request: from its arrival until its response closes (connect-timeout's on-finished),
 * then 503 through `next`; only while `armed()`, so that the requests before the one under test are not timed.
 */
function timeoutWhile(armed: () => boolean): express.RequestHandler {
  return (req, res, next) => {
    if (armed()) {
      const timer = setTimeout(() => {
        (req as { timedout?: boolean }).timedout = true;
        next(Object.assign(new Error('Response timeout'), { status: 503, code: 'ETIMEDOUT' }));
      }, TIMEOUT_MS);
      res.once('close', () => clearTimeout(timer));
    }
    next();
  };
}

/** The host's error handler, noting each error it hears in `heard`. */
function recordingHostErrors(heard: string[]): express.ErrorRequestHandler {
  return (err: { message: string }, req, res, next) => { heard.push(err.message); hostErrorHandler(err, req, res, next); };
}

/** A valid authorization request (PKCE S256, `state=slow`) of `clientId`, as a browser sends it. */
function slowAuthorizeQuery(clientId: string): URLSearchParams {
  return new URLSearchParams({
    response_type: 'code', client_id: clientId, redirect_uri: REDIRECT_URI, state: 'slow',
    code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM', code_challenge_method: 'S256',
  });
}

/** `call`, answered only after the host's timeout: a store or a host source that is slow (a busy database). */
function pastTheTimeout<A extends unknown[], R>(call: (...args: A) => Promise<R>): (...args: A) => Promise<R> {
  return async (...args) => {
    await new Promise((resolve) => setTimeout(resolve, TIMEOUT_MS * 2));
    return call(...args);
  };
}

/**
 * GETs `path` once from `mount` served behind connect-timeout and the host's error handler, checks that the client got
 * the host's 503 alone, waits out any late write, and resolves the errors the host's handler heard.
 */
async function getPastHostTimeout(mount: (app: express.Express) => void, path: string): Promise<string[]> {
  const hostErrors: string[] = [];
  const app = express();
  app.use(connectTimeoutLike);
  mount(app);
  app.use(recordingHostErrors(hostErrors));
  const server = app.listen(0, '127.0.0.1');
  try {
    await new Promise((resolve) => server.once('listening', resolve));
    const res = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}${path}`, { redirect: 'manual' });
    expect(res.status).toBe(503);
    expect(await res.text()).toBe('{"host":"Response timeout"}');
    await new Promise((resolve) => setTimeout(resolve, TIMEOUT_MS * 5));
    return hostErrors;
  } finally {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
}

describe('a host whose request timeout answers while the router or its metrics wait on something slow', () => {
  it('JWKS: the client gets the host\'s 503 alone; the router writes nothing late, logs no "unexpected" error and hands the host no error of its own', async () => {
    const store = createMemoryStore();
    const errors: string[] = [];
    const oauth = createTestRouter(store, { accessTokenFormat: 'jwt', logger: { warn() {}, error: (line: string) => { errors.push(line); } } });
    store.keys!.listSigningKeys = pastTheTimeout(store.keys!.listSigningKeys.bind(store.keys));
    const rejections: unknown[] = [];
    const onRejection = (reason: unknown): void => { rejections.push(reason); };
    process.on('unhandledRejection', onRejection);
    try {
      const hostErrors = await getPastHostTimeout((app) => app.use(oauth.router), '/oauth2/jwks');
      expect(rejections).toEqual([]);
      expect(errors, 'no "unexpected" error is logged for an answer the host gave').toEqual([]);
      expect(hostErrors, 'the host hears of its own timeout only').toEqual(['Response timeout']);
    } finally {
      process.off('unhandledRejection', onRejection);
    }
  });

  it('authorization page: the client gets the host\'s 503 alone; the sign-in page written late sets no cookie, logs no "unexpected" error and hands the host no error of its own', async () => {
    const store = createMemoryStore();
    const errors: string[] = [];
    const oauth = createTestRouter(store, { logger: { warn() {}, error: (line: string) => { errors.push(line); } } });
    const { client } = await registerClient(store, { name: 'Acme CRM', flow: 'authorization_code', redirectUris: [REDIRECT_URI] });
    store.clients.findClient = pastTheTimeout(store.clients.findClient.bind(store.clients));
    const query = slowAuthorizeQuery(client.clientId);
    // A browser without the sign-in form's cookie: the page written late would set it.
    const hostErrors = await getPastHostTimeout((app) => app.use(oauth.router), `/oauth2/authorize?${query}`);
    expect(errors, 'no "unexpected" error is logged for an answer the host gave').toEqual([]);
    expect(hostErrors, 'the host hears of its own timeout only').toEqual(['Response timeout']);
  });

  it('authorization request sent to the host\'s login: the client gets the host\'s 503 alone; the router sets no mark cookie late, and logs no "unexpected" error', async () => {
    const store = createMemoryStore();
    const errors: string[] = [];
    const oauth = createOAuthRouter(store, { currentUser: async () => null, loginUrl: (_req, returnTo) => `/login?return_to=${encodeURIComponent(returnTo)}` }, {
      issuer: ISSUER, session: { secret: 'test-session-secret-0123456789' }, logger: { warn() {}, error: (line: string) => { errors.push(line); } },
    });
    const { client } = await registerClient(store, { name: 'Acme CRM', flow: 'authorization_code', redirectUris: [REDIRECT_URI] });
    store.clients.findClient = pastTheTimeout(store.clients.findClient.bind(store.clients));
    const query = slowAuthorizeQuery(client.clientId);
    const hostErrors = await getPastHostTimeout((app) => app.use(oauth.router), `/oauth2/authorize?${query}`);
    expect(errors, 'no "unexpected" error is logged for an answer the host gave').toEqual([]);
    expect(hostErrors, 'the host hears of its own timeout only').toEqual(['Response timeout']);
  });

  it('metrics.handler: the scraper gets the host\'s 503 alone; the handler writes nothing late and its promise settles without an error', async () => {
    const registry = new Registry();
    // A collect function of the host's that reads something slow.
    const collect = pastTheTimeout(async () => undefined);
    new Gauge({ name: 'host_queue_depth', help: 'A gauge read from a slow source.', registers: [registry], async collect() { await collect(); this.set(1); } });
    const metrics = createOAuthMetrics({ registry });
    const settled: unknown[] = [];
    try {
      // As Express 4 calls a handler: its promise is not followed, so a late write would be an unhandled rejection.
      const hostErrors = await getPastHostTimeout((app) => app.get('/metrics', (req, res, next) => {
        (metrics.handler(req, res, next) as Promise<void> | undefined)?.then(() => settled.push('ok'), (err: unknown) => settled.push(err));
      }), '/metrics');
      expect(settled).toEqual(['ok']);
      expect(hostErrors, 'the host hears of its own timeout only').toEqual(['Response timeout']);
    } finally {
      metrics.close();
    }
  });
});

/** POSTs `body` to the token endpoint at once, within the host's timeout. */
function postNow(url: string, body: string, authorization: string): Promise<{ status: number; body: string }> {
  return fetch(`${url}/oauth2/token`, {
    method: 'POST', headers: { Authorization: authorization, 'Content-Type': 'application/x-www-form-urlencoded' }, body,
  }).then(async (res) => ({ status: res.status, body: await res.text() }));
}

describe('a host whose request timeout answers while a sign-in waits on a slow rate-limit count', () => {
  it('sign-in over its limit: the client gets the host\'s 503 alone; the router sets no Retry-After late, which was an unhandled rejection (RFC 6585 §4)', async () => {
    const store = createMemoryStore();
    const errors: string[] = [];
    const oauth = createTestRouter(store, {
      loginRateLimit: { max: 1, maxPerSource: 100, maxPerAccount: 100 },
      logger: { warn() {}, error: (line: string) => { errors.push(line); } },
    });
    const { client } = await registerClient(store, { name: 'Acme CRM', flow: 'authorization_code', redirectUris: [REDIRECT_URI] });
    const rejections: unknown[] = [];
    const onRejection = (reason: unknown): void => { rejections.push(reason); };
    process.on('unhandledRejection', onRejection);
    const hostErrors: string[] = [];
    const app = express();
    // Only the request sent once the counts are slow is timed, and, as connect-timeout times it, until it is answered
    // (its on-finished of the response): the stand-in above stops at the request's close, which Node emits as soon as
    // a quick body is read.
    let timed = false;
    app.use(timeoutWhile(() => timed));
    app.use(oauth.router);
    app.use(recordingHostErrors(hostErrors));
    const server = app.listen(0, '127.0.0.1');
    try {
      await new Promise((resolve) => server.once('listening', resolve));
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const agent = request.agent(url);
      const query = new URLSearchParams({
        response_type: 'code', client_id: client.clientId, redirect_uri: REDIRECT_URI, state: 'slow',
        code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM', code_challenge_method: 'S256',
      });
      const page = await agent.get(`/oauth2/authorize?${query}`);
      expect(page.status).toBe(200);
      const attempt = (form: string) => agent.post('/oauth2/login').set('Origin', ISSUER).type('form').send({
        csrf_token: hiddenField(form, 'csrf_token'), request_id: hiddenField(form, 'request_id'), username: 'alice', password: 'wrong',
      });
      const first = await attempt(page.text);
      expect(first.text).toContain('id="login-error"');
      // The counters' store turns slow (a busy database): the next failure's count comes back after the host answered.
      const hit = store.rateLimits!.hit.bind(store.rateLimits);
      store.rateLimits!.hit = pastTheTimeout(hit);
      timed = true;
      const second = await attempt(first.text);
      expect(second.status).toBe(503);
      expect(second.text).toBe('{"host":"Response timeout"}');
      await new Promise((resolve) => setTimeout(resolve, TIMEOUT_MS * 5));
      expect(rejections).toEqual([]);
      expect(hostErrors, 'the host hears of its own timeout only').toEqual(['Response timeout']);
      expect(errors, 'no "unexpected" error is logged for an answer the host gave').toEqual([]);
    } finally {
      process.off('unhandledRejection', onRejection);
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

describe('a host whose request timeout answers while a sign-out waits on a slow session store', () => {
  it('sign-out: the client gets the host\'s 503 alone; the router clears no cookie late, logs no "unexpected" error and hands the host no error of its own', async () => {
    const store = createMemoryStore();
    const errors: string[] = [];
    const sessions = new MemorySessionStore({ ttl: 3600 });
    const oauth = createTestRouter(store, {
      session: { secret: 'test-session-secret-0123456789', store: sessions },
      logger: { warn() {}, error: (line: string) => { errors.push(line); } },
    });
    const { client, clientSecret } = await registerClient(store, { name: 'Acme CRM', flow: 'authorization_code', redirectUris: [REDIRECT_URI] });
    const hostErrors: string[] = [];
    const app = express();
    // Only the sign-out is timed, until it is answered, as connect-timeout times a request.
    let timed = false;
    app.use(timeoutWhile(() => timed));
    app.use(oauth.router);
    app.use(recordingHostErrors(hostErrors));
    const server = app.listen(0, '127.0.0.1');
    try {
      await new Promise((resolve) => server.once('listening', resolve));
      const agent = request.agent(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
      await signIn(agent, '', authorizeQuery({ clientId: client.clientId, clientSecret }));
      const page = await agent.get('/oauth2/consents');
      expect(page.status).toBe(200);
      // The session store turns slow (a busy Redis): the sign-out's destroy comes back after the host answered.
      const destroy = sessions.destroy.bind(sessions);
      sessions.destroy = (sid, callback) => { setTimeout(() => destroy(sid, callback), TIMEOUT_MS * 2); };
      timed = true;
      const out = await agent.post('/oauth2/logout').set('Origin', ISSUER).type('form').send({ csrf_token: hiddenField(page.text, 'csrf_token') });
      expect(out.status).toBe(503);
      expect(out.text).toBe('{"host":"Response timeout"}');
      await new Promise((resolve) => setTimeout(resolve, TIMEOUT_MS * 5));
      expect(errors, 'no "unexpected" error is logged for an answer the host gave').toEqual([]);
      expect(hostErrors, 'the host hears of its own timeout only').toEqual(['Response timeout']);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

describe('a host whose request timeout answers while a sign-in waits on a slow directory', () => {
  it('a good password checked after the host\'s 503: the router logs no "answer carried no session cookie" error (its misleading advice to set trust proxy) and hands the host no error of its own', async () => {
    const store = createMemoryStore();
    const errors: string[] = [];
    const directory = createTestUserAuth(new Set());
    // The host's directory turns slow (a busy LDAP server) once the form is shown.
    let slow = false;
    const verify = directory.verifyCredentials!.bind(directory);
    const userAuth = Object.assign(Object.create(directory) as typeof directory, {
      verifyCredentials: (username: string, password: string) => (slow ? pastTheTimeout(verify)(username, password) : verify(username, password)),
    });
    const oauth = createTestRouter(store, { logger: { warn() {}, error: (line: string) => { errors.push(line); } } }, userAuth);
    const { client } = await registerClient(store, { name: 'Acme CRM', flow: 'authorization_code', redirectUris: [REDIRECT_URI] });
    const hostErrors: string[] = [];
    const app = express();
    app.use(timeoutWhile(() => slow));
    app.use(oauth.router);
    app.use(recordingHostErrors(hostErrors));
    const server = app.listen(0, '127.0.0.1');
    try {
      await new Promise((resolve) => server.once('listening', resolve));
      const agent = request.agent(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
      const page = await agent.get(`/oauth2/authorize?${authorizeQuery({ clientId: client.clientId, clientSecret: '' })}`);
      expect(page.status).toBe(200);
      slow = true;
      const posted = await agent.post('/oauth2/login').set('Origin', ISSUER).type('form').send({
        csrf_token: hiddenField(page.text, 'csrf_token'), request_id: hiddenField(page.text, 'request_id'), username: USER.username, password: USER.password,
      });
      expect(posted.status).toBe(503);
      await new Promise((resolve) => setTimeout(resolve, TIMEOUT_MS * 5));
      expect(errors, 'no error is logged for an answer the host gave').toEqual([]);
      expect(hostErrors, 'the host hears of its own timeout only').toEqual(['Response timeout']);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

describe('a host whose request timeout answers while a sign-in waits on a slow directory, the router on the host\'s express-session', () => {
  it('a good password checked after the host\'s 503 starts no session: the browser keeps the host session its cookie names, with the host\'s data (OWASP: a new id only with its cookie)', async () => {
    const store = createMemoryStore();
    const directory = createTestUserAuth(new Set());
    let slow = false;
    const verify = directory.verifyCredentials!.bind(directory);
    const userAuth = Object.assign(Object.create(directory) as typeof directory, {
      verifyCredentials: (username: string, password: string) => (slow ? pastTheTimeout(verify)(username, password) : verify(username, password)),
    });
    const oauth = createTestRouter(store, {}, userAuth);
    const { client } = await registerClient(store, { name: 'Acme CRM', flow: 'authorization_code', redirectUris: [REDIRECT_URI] });
    const app = express();
    app.use(session({ secret: 'host-session-secret-0123456789', resave: false, saveUninitialized: false }));
    // What the host keeps in its session (a cart, a language, its own sign-in).
    app.post('/host/note', (req, res) => { (req.session as unknown as { note?: string }).note = 'kept'; res.status(204).end(); });
    app.get('/host/note', (req, res) => { res.json({ note: (req.session as unknown as { note?: string }).note ?? null }); });
    app.use(timeoutWhile(() => slow));
    app.use(oauth.router);
    app.use(hostErrorHandler);
    const server = app.listen(0, '127.0.0.1');
    try {
      await new Promise((resolve) => server.once('listening', resolve));
      const agent = request.agent(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
      expect((await agent.post('/host/note')).status).toBe(204);
      const page = await agent.get(`/oauth2/authorize?${authorizeQuery({ clientId: client.clientId, clientSecret: '' })}`);
      expect(page.status).toBe(200);
      slow = true;
      const posted = await agent.post('/oauth2/login').set('Origin', ISSUER).type('form').send({
        csrf_token: hiddenField(page.text, 'csrf_token'), request_id: hiddenField(page.text, 'request_id'), username: USER.username, password: USER.password,
      });
      expect(posted.status).toBe(503);
      await new Promise((resolve) => setTimeout(resolve, TIMEOUT_MS * 5));
      slow = false;
      expect((await agent.get('/host/note')).body).toEqual({ note: 'kept' });
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

/**
 * Resolves once the token endpoint of the router whose events are `events` has finished its next request: with its
 * diagnostics message's outcome, and the OAuth error answers that router reported meanwhile (`oauth_errors_total`).
 */
function tokenRequestEnd(events: OAuthEvents): Promise<{ outcome: TokenRequestMessage['outcome']; errorAnswers: string[] }> {
  return new Promise((resolve) => {
    const errorAnswers: string[] = [];
    const onError = (message: unknown): void => {
      const answer = message as ErrorAnswerMessage;
      if (answer.source === events) errorAnswers.push(`${answer.status} ${answer.error}`);
    };
    const listener = (message: unknown): void => {
      if ((message as TokenRequestMessage).source !== events) return;
      diagnosticsChannel.unsubscribe(DIAGNOSTICS_CHANNELS.tokenRequest, listener);
      diagnosticsChannel.unsubscribe(DIAGNOSTICS_CHANNELS.errorAnswer, onError);
      resolve({ outcome: (message as TokenRequestMessage).outcome, errorAnswers });
    };
    diagnosticsChannel.subscribe(DIAGNOSTICS_CHANNELS.errorAnswer, onError);
    diagnosticsChannel.subscribe(DIAGNOSTICS_CHANNELS.tokenRequest, listener);
  });
}

/** `store` with its saveTokens calls counted in `saves.count`. */
function countingSaves(store: Store): { store: Store; saves: { count: number } } {
  const saves = { count: 0 };
  const save = store.tokens.saveTokens.bind(store.tokens);
  return { store: { ...store, tokens: { ...store.tokens, saveTokens: (...args) => { saves.count += 1; return save(...args); } } }, saves };
}

/**
 * Sends a token request whose findUser is held while the host's timeout is on: the host answers it (503), then the held
 * call goes on, and this resolves once the router has finished the request (its diagnostics message).
 */
async function answeredWhileFindUserHeld(
  timed: { on: boolean; url: string; events: OAuthEvents }, held: { on: boolean; release(): void }, body: string, authorization: string,
): Promise<void> {
  const ended = tokenRequestEnd(timed.events);
  timed.on = true;
  held.on = true;
  const res = await postNow(timed.url, body, authorization);
  timed.on = false;
  expect(res.status).toBe(503);
  held.release();
  expect(await ended, 'refused before the save, unheard: undelivered, and no error answer counted').toEqual({ outcome: 'undelivered', errorAnswers: [] });
  held.on = false;
}

/** The test directory, whose findUser waits, while `held.on`, until `held.release()` (a busy LDAP server). */
function heldFindUser(): { userAuth: UserAuth; held: { on: boolean; release(): void } } {
  const directory = createTestUserAuth(new Set());
  const find = directory.findUser!.bind(directory);
  let release!: () => void;
  const released = new Promise<void>((resolve) => { release = resolve; });
  const held = { on: false, release };
  const userAuth = Object.assign(Object.create(directory) as UserAuth, {
    findUser: async (id: string) => {
      if (held.on) await released;
      return find(id);
    },
  });
  return { userAuth, held };
}

const HOST_TIMEOUT_STORES = builtInStores('host_timeout', {}, { redisPrefix: process.env.OAUTH_TEST_REDIS_PREFIX ?? '' });

describe.each(HOST_TIMEOUT_STORES)('a host whose request timeout answers a token request while its grant is at the store (%s)', (_label, available, open) => {
  /**
   * `t` (the test app, untimed) on `store`, and a second router on `timedStore` (the same store, wrapped) behind the
   * switchable connect-timeout stand-in and the host's recording error handler; runs `use`, then closes the server.
   */
  async function withTimedRouter(
    store: Store, wrap: (store: Store) => Store, userAuth: UserAuth | undefined,
    use: (t: Awaited<ReturnType<typeof createTestApp>>, timed: { on: boolean; url: string; events: OAuthEvents; revoked: TokenRevokedEvent[]; hostErrors: string[] }) => Promise<void>,
  ): Promise<void> {
    const t = await createTestApp({ clientAuthRateLimit: false }, store);
    const oauth = createTestRouter(wrap(store), { clientAuthRateLimit: false }, userAuth);
    const revoked: TokenRevokedEvent[] = [];
    oauth.events.on('token.revoked', (event) => { revoked.push(event); });
    const hostErrors: string[] = [];
    const timed = { on: false, url: '', events: oauth.events, revoked, hostErrors };
    const app = express();
    app.use(timeoutWhile(() => timed.on));
    app.use(oauth.router);
    app.use(recordingHostErrors(hostErrors));
    const server = app.listen(0, '127.0.0.1');
    try {
      await new Promise((resolve) => server.once('listening', resolve));
      timed.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      await use(t, timed);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  }

  const exchangeOf = (code: string) => `grant_type=authorization_code&code=${code}&redirect_uri=${encodeURIComponent(REDIRECT_URI)}`;

  it.skipIf(!available)('code exchange saved after the host\'s 503: its tokens are revoked at once (token.revoked, undelivered), and the code sent again is invalid_grant with nothing live (RFC 6749 §4.1.2)', () => withOpenedStore(open, async ({ store }) => {
    let gate!: ReturnType<typeof gateSaveTokens>;
    await withTimedRouter(store, (inner) => (gate = gateSaveTokens(inner)).store, undefined, async (t, timed) => {
      const code = await obtainCode(t.app, t.codeClient);
      const issued: string[] = [];
      timed.events.on('token.issued', (event) => { issued.push(event.grantType); });
      const ended = tokenRequestEnd(timed.events);
      timed.on = true;
      const answer = postNow(timed.url, exchangeOf(code), basic(t.codeClient));
      const held = await gate.reached;
      const res = await answer;
      timed.on = false;
      expect(res.status).toBe(503);
      expect(res.body).toBe('{"host":"Response timeout"}');
      gate.open();
      await ended;
      expect(await store.tokens.findAccessToken(held.access.tokenHash), 'the access token nobody received').toBeNull();
      expect(await store.tokens.findRefreshToken(held.refresh!.tokenHash), 'the refresh token nobody received').toBeNull();
      expect(timed.revoked).toEqual([expect.objectContaining({ cause: 'undelivered', extent: 'grant', grantId: held.access.grantId, clientId: t.codeClient.clientId })]);
      expect(issued, 'no token.issued (nor oauth_tokens_issued_total) for tokens no one received').toEqual([]);
      expect(await ended, 'counted as undelivered, with no 400 invalid_request in oauth_errors_total: the host\'s 503 was the answer')
        .toEqual({ outcome: 'undelivered', errorAnswers: [] });
      const again = await postNow(timed.url, exchangeOf(code), basic(t.codeClient));
      expect(again.status).toBe(400);
      expect(JSON.parse(again.body).error).toBe('invalid_grant');
      expect(timed.revoked, 'the replay finds the grant revoked already: reported once').toHaveLength(1);
      expect(timed.hostErrors, 'the host hears of its own timeout only').toEqual(['Response timeout']);
    });
  }));

  it.skipIf(!available)('refresh saved after the host\'s 503: the new access token is revoked at once (token.revoked, undelivered, extent token), and the refresh token, not rotated (SPEC §4.5), still serves the retry', () => withOpenedStore(open, async ({ store }) => {
    let gate!: ReturnType<typeof gateSaveTokens>;
    await withTimedRouter(store, (inner) => (gate = gateSaveTokens(inner)).store, undefined, async (t, timed) => {
      const exchanged = await request(t.app).post('/oauth2/token').set('Authorization', basic(t.codeClient)).type('form')
        .send(exchangeOf(await obtainCode(t.app, t.codeClient)));
      const refreshToken = exchanged.body.refresh_token as string;
      expect(refreshToken).toBeTruthy();
      const ended = tokenRequestEnd(timed.events);
      timed.on = true;
      const answer = postNow(timed.url, `grant_type=refresh_token&refresh_token=${refreshToken}`, basic(t.codeClient));
      const held = await gate.reached;
      const res = await answer;
      timed.on = false;
      expect(res.status).toBe(503);
      gate.open();
      await ended;
      expect(await store.tokens.findAccessToken(held.access.tokenHash), 'the access token nobody received').toBeNull();
      expect(timed.revoked).toEqual([expect.objectContaining({ cause: 'undelivered', extent: 'token', grantId: held.access.grantId })]);
      const again = await postNow(timed.url, `grant_type=refresh_token&refresh_token=${refreshToken}`, basic(t.codeClient));
      expect(again.status, again.body).toBe(200);
      const me = await request(t.app).get('/api/v1/me').set('Authorization', `Bearer ${JSON.parse(again.body).access_token as string}`);
      expect(me.status).toBe(200);
      expect(timed.hostErrors, 'the host hears of its own timeout only').toEqual(['Response timeout']);
    });
  }));

  it.skipIf(!available)('client_credentials saved after the host\'s 503: its token is revoked at once (token.revoked, undelivered)', () => withOpenedStore(open, async ({ store }) => {
    let gate!: ReturnType<typeof gateSaveTokens>;
    await withTimedRouter(store, (inner) => (gate = gateSaveTokens(inner)).store, undefined, async (t, timed) => {
      const ended = tokenRequestEnd(timed.events);
      timed.on = true;
      const answer = postNow(timed.url, 'grant_type=client_credentials', basic(t.credentialsClient));
      const held = await gate.reached;
      expect((await answer).status).toBe(503);
      timed.on = false;
      gate.open();
      await ended;
      expect(await store.tokens.findAccessToken(held.access.tokenHash), 'the access token nobody received').toBeNull();
      expect(timed.revoked).toEqual([expect.objectContaining({ cause: 'undelivered', extent: 'grant', grantId: held.access.grantId })]);
    });
  }));

  it.skipIf(!available)('refresh answered by the host before its save began (a slow findUser): nothing is saved, and the refresh token serves the retry', () => withOpenedStore(open, async ({ store }) => {
    const { userAuth, held } = heldFindUser();
    let counted!: ReturnType<typeof countingSaves>;
    await withTimedRouter(store, (inner) => (counted = countingSaves(inner)).store, userAuth, async (t, timed) => {
      const exchanged = await request(t.app).post('/oauth2/token').set('Authorization', basic(t.codeClient)).type('form')
        .send(exchangeOf(await obtainCode(t.app, t.codeClient)));
      const refreshToken = exchanged.body.refresh_token as string;
      await answeredWhileFindUserHeld(timed, held, `grant_type=refresh_token&refresh_token=${refreshToken}`, basic(t.codeClient));
      expect(counted.saves.count, 'no token saved for an answer the host gave').toBe(0);
      expect(timed.revoked).toEqual([]);
      const again = await postNow(timed.url, `grant_type=refresh_token&refresh_token=${refreshToken}`, basic(t.codeClient));
      expect(again.status, again.body).toBe(200);
      expect(timed.hostErrors, 'the host hears of its own timeout only').toEqual(['Response timeout']);
    });
  }));

  it.skipIf(!available)('code exchange answered by the host after the code was spent, before the save (a slow findUser): no token is saved, and the code sent again is invalid_grant (RFC 6749 §4.1.2)', () => withOpenedStore(open, async ({ store }) => {
    const { userAuth, held } = heldFindUser();
    let counted!: ReturnType<typeof countingSaves>;
    await withTimedRouter(store, (inner) => (counted = countingSaves(inner)).store, userAuth, async (t, timed) => {
      const code = await obtainCode(t.app, t.codeClient);
      await answeredWhileFindUserHeld(timed, held, exchangeOf(code), basic(t.codeClient));
      expect(counted.saves.count, 'no token saved for an answer the host gave').toBe(0);
      const again = await postNow(timed.url, exchangeOf(code), basic(t.codeClient));
      expect(JSON.parse(again.body).error).toBe('invalid_grant');
      expect(counted.saves.count).toBe(0);
    });
  }));
});

/**
 * connect-timeout's 503, given on cue rather than by a timer: the request under way when `arm()` was called is handed to
 * the host's error handlers, marked `timedout`, when the test calls `fire()` (the moment the timer would have run out).
 */
function timeoutOnCue(): { middleware: express.RequestHandler; arm(): void; fire(): void } {
  let armed = false;
  let fire: (() => void) | null = null;
  return {
    middleware: (req, _res, next) => {
      if (armed) {
        armed = false;
        fire = () => {
          (req as { timedout?: boolean }).timedout = true;
          next(Object.assign(new Error('Response timeout'), { status: 503, code: 'ETIMEDOUT' }));
        };
      }
      next();
    },
    arm: () => { armed = true; },
    fire: () => { fire?.(); fire = null; },
  };
}

/** The session id a signed express-session cookie value (`s%3A<id>.<signature>`) names. */
function sessionIdOf(cookie: string | undefined): string {
  const value = decodeURIComponent(cookie ?? '');
  expect(value.startsWith('s:')).toBe(true);
  return value.slice(2, value.lastIndexOf('.'));
}

/**
 * Posts the right password on `page` (a login page) with `method` of the session store held, has the host answer 503 once
 * the held call is reached, then releases it; resolves once the router has finished the sign-in (login.succeeded).
 */
async function signInAnsweredByHost(
  browser: CookieBrowser, page: string, sessions: HeldSessionStore, cue: ReturnType<typeof timeoutOnCue>, events: OAuthEvents, method: HeldMethod,
): Promise<{ heldSid: string }> {
  const succeeded = new Promise<void>((resolve) => { events.once('login.succeeded', () => resolve()); });
  const held = sessions.holdNext(method);
  cue.arm();
  const posted = browser.post('/oauth2/login', {
    csrf_token: hiddenField(page, 'csrf_token'), request_id: hiddenField(page, 'request_id'), username: USER.username, password: USER.password,
  });
  const heldSid = await held.reached;
  cue.fire();
  const answered = await posted;
  expect(answered.status).toBe(503);
  expect(answered.text).toBe('{"host":"Response timeout"}');
  held.release();
  await succeeded;
  return { heldSid };
}

const HELD_STEPS: ReadonlyArray<readonly [string, HeldMethod]> = [
  ['the old session is being destroyed', 'destroy'],
  ['the new session is being saved', 'set'],
];

describe.each(HELD_STEPS)('a host whose request timeout answers a sign-in while %s (RFC 6819 §4.4.1.4: a new session id at sign-in)', (_step, method) => {
  it('on the host\'s express-session: the browser holds a live session, with a new id, the host\'s data and the sign-in', async () => {
    const store = createMemoryStore();
    const oauth = createTestRouter(store);
    const { client } = await registerClient(store, { name: 'Acme CRM', flow: 'authorization_code', redirectUris: [REDIRECT_URI] });
    const sessions = new HeldSessionStore();
    const cue = timeoutOnCue();
    const app = express();
    // Typed by this package's loose SessionStoreLike, not @types/express-session's Store; it is one.
    app.use(session({ secret: 'host-session-secret-0123456789', resave: false, saveUninitialized: false, store: sessions as unknown as session.Store }));
    // What the host keeps in its session (a cart, a language, its own sign-in).
    app.post('/host/note', (req, res) => { (req.session as unknown as { note?: string }).note = 'kept'; res.status(204).end(); });
    app.get('/host/note', (req, res) => { res.json({ note: (req.session as unknown as { note?: string }).note ?? null }); });
    app.use(cue.middleware);
    app.use(oauth.router);
    app.use(hostErrorHandler);
    const browser = new CookieBrowser(app);
    expect((await browser.post('/host/note', {})).status).toBe(204);
    const before = sessionIdOf(browser.cookies.get('connect.sid'));
    const page = await browser.get(`/oauth2/authorize?${authorizeQuery({ clientId: client.clientId, clientSecret: '' })}`);
    expect(page.status).toBe(200);
    await signInAnsweredByHost(browser, page.text, sessions, cue, oauth.events, method);
    const after = sessionIdOf(browser.cookies.get('connect.sid'));
    expect(await sessions.read(after), 'the session the browser\'s cookie names is live').not.toBeNull();
    expect(after, 'no session fixation: the id changed').not.toBe(before);
    expect(await sessions.read(before), 'the session from before the sign-in is gone').toBeNull();
    expect((await browser.get('/host/note')).body).toEqual({ note: 'kept' });
    const again = await browser.get(`/oauth2/authorize?${authorizeQuery({ clientId: client.clientId, clientSecret: '' })}`);
    expect(again.status).toBe(200);
    expect(again.text, 'signed in: the consent page').toContain('name="decision"');
  });

  it('on the router\'s own session, signing in again (prompt=login): the browser holds a live session, with a new id and the sign-in', async () => {
    const store = createMemoryStore();
    const sessions = new HeldSessionStore();
    const oauth = createTestRouter(store, { session: { secret: 'test-session-secret-0123456789', store: sessions } });
    const { client } = await registerClient(store, { name: 'Acme CRM', flow: 'authorization_code', redirectUris: [REDIRECT_URI] });
    const cue = timeoutOnCue();
    const app = express();
    app.use(cue.middleware);
    app.use(oauth.router);
    app.use(hostErrorHandler);
    const browser = new CookieBrowser(app);
    const query = (extra: Record<string, string> = {}) => authorizeQuery({ clientId: client.clientId, clientSecret: '' }, extra);
    const first = await browser.get(`/oauth2/authorize?${query()}`);
    const signedIn = await browser.post('/oauth2/login', {
      csrf_token: hiddenField(first.text, 'csrf_token'), request_id: hiddenField(first.text, 'request_id'), username: USER.username, password: USER.password,
    });
    expect(signedIn.status).toBe(303);
    const before = sessionIdOf(browser.cookies.get('oauth.sid'));
    const page = await browser.get(`/oauth2/authorize?${query({ prompt: 'login' })}`);
    expect(page.text, 'prompt=login: the login page').toContain('name="password"');
    await signInAnsweredByHost(browser, page.text, sessions, cue, oauth.events, method);
    const after = sessionIdOf(browser.cookies.get('oauth.sid'));
    expect(await sessions.read(after), 'the session the browser\'s cookie names is live').not.toBeNull();
    expect(after, 'no session fixation: the id changed').not.toBe(before);
    expect(await sessions.read(before), 'the session from before the sign-in is gone').toBeNull();
    const again = await browser.get(`/oauth2/authorize?${query()}`);
    expect(again.status).toBe(200);
    expect(again.text, 'signed in: the consent page').toContain('name="decision"');
  });
});
