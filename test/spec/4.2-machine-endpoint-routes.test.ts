// SPEC §4.2, RFC 6749 §3.2, RFC 7009 §2, RFC 7662 §2: the machine endpoints answer the same whether or not the
// router walks its stack for them (a POST to their exact path is served directly, src/http/direct-routes.ts).
import { channel, tracingChannel } from 'node:diagnostics_channel';
import { beforeAll, describe, expect, it } from 'vitest';
import express, { type ErrorRequestHandler, type Request } from 'express';
import request from 'supertest';
import { basic, createTestApp, createTestRouter, ISSUER, LEGACY_ISSUER, type TestApp, type TestClient } from '../helpers/app.js';
import type { OAuthRouter } from '../../src/types.js';
import { createMemoryStore } from '../../src/stores/memory/index.js';
import { registerClient } from '../../src/clients/register-client.js';
import { serveDirectly, type DirectRoute } from '../../src/http/direct-routes.js';
import { listen, rawRequest } from '../helpers/raw-http.js';

/** What express's router publishes each handler on; a subscriber makes every request walk the stack. */
const routerTracing = tracingChannel<object, { req: Request; route?: string }>('express.router.request');

/** Runs `fn` while an APM-like subscriber listens, collecting the URL and route of each handler it sees start. */
async function walkingTheStack<T>(fn: () => Promise<T>): Promise<{ result: T; seen: string[] }> {
  const seen: string[] = [];
  const subscriber = {
    start: (ctx: { req: Request; route?: string }) => { seen.push(`${ctx.req.method} ${ctx.req.originalUrl} ${String(ctx.route)}`); },
    end() {}, asyncStart() {}, asyncEnd() {}, error() {},
  };
  routerTracing.subscribe(subscriber);
  try {
    return { result: await fn(), seen };
  } finally {
    routerTracing.unsubscribe(subscriber);
  }
}

/** The parts of an answer that do not vary between two requests: status, headers but Date, the body's shape. */
function shape(res: request.Response): unknown {
  const { date: _date, ...headers } = res.headers;
  const body = res.body as Record<string, unknown>;
  return {
    status: res.status,
    headers,
    body: Object.fromEntries(Object.entries(body).map(([key, value]) => [key, key.endsWith('_token') ? typeof value : value])),
  };
}

describe('the machine endpoints, served with or without walking the router stack', () => {
  let t: TestApp;
  let mounted: express.Express;
  let mountedClient: TestClient;
  beforeAll(async () => {
    t = await createTestApp();
    // An issuer with a path (its routes under /auth), and the router mounted under a path of the host's own
    // (/mount): the exact path the router compares is what is left of the URL below the mount.
    const store = createMemoryStore();
    const oauth = createTestRouter(store, { issuer: `${ISSUER}/auth` });
    mounted = express();
    mounted.use('/mount', oauth.router);
    const { client, clientSecret } = await registerClient(store, { name: 'Mounted', flow: 'client_credentials' });
    mountedClient = { clientId: client.clientId, clientSecret };
  });

  const tokenAt = (app: express.Express, path: string, client: TestClient) =>
    request(app).post(path).set('Authorization', basic(client)).type('form').send({ grant_type: 'client_credentials' });

  it('answers a token request at each address the stack matches exactly as when the stack is walked', async () => {
    const cases: Array<[express.Express, string, TestClient]> = [
      [t.app, '/oauth2/token', t.credentialsClient],
      [t.app, '/oauth2/token?unused=1', t.credentialsClient],
      [t.app, '/OAuth2/Token', t.credentialsClient], // the router matches paths case-insensitively
      [t.app, '/oauth2/token/', t.credentialsClient], // and with a trailing slash
      [t.app, '/legacy/oauth2/token', t.legacyCredentialsClient], // SPEC §9
      [mounted, '/mount/auth/oauth2/token', mountedClient],
      [mounted, '/mount/auth/oauth2/token?x', mountedClient],
    ];
    for (const [app, path, client] of cases) {
      const direct = await tokenAt(app, path, client);
      const { result: walked } = await walkingTheStack(() => tokenAt(app, path, client));
      expect(direct.status, path).toBe(200);
      expect(shape(direct), path).toEqual(shape(walked));
    }
  });

  it('answers revocation (RFC 7009 §2.2) and introspection (RFC 7662 §2.2) the same either way', async () => {
    const issued = await tokenAt(t.app, '/oauth2/token', t.credentialsClient);
    const introspect = () => request(t.app).post('/oauth2/introspect').set('Authorization', basic(t.credentialsClient))
      .type('form').send({ token: issued.body.access_token });
    const direct = await introspect();
    const { result: walked } = await walkingTheStack(introspect);
    expect(direct.body.active).toBe(true);
    expect(shape(direct)).toEqual(shape(walked));

    const revoke = (token: string) => request(t.app).post('/oauth2/revoke').set('Authorization', basic(t.credentialsClient))
      .type('form').send({ token });
    const other = await tokenAt(t.app, '/oauth2/token', t.credentialsClient);
    const revokedDirectly = await revoke(issued.body.access_token);
    const { result: revokedWalking } = await walkingTheStack(() => revoke(other.body.access_token));
    expect(revokedDirectly.status).toBe(200);
    expect(shape(revokedDirectly)).toEqual(shape(revokedWalking));
    expect((await introspect()).body).toEqual({ active: false });
  });

  it('answers a client error (RFC 6749 §5.2 invalid_client) the same either way', async () => {
    const wrong = { clientId: t.credentialsClient.clientId, clientSecret: 'not-the-secret' };
    const direct = await tokenAt(t.app, '/oauth2/token', wrong);
    const { result: walked } = await walkingTheStack(() => tokenAt(t.app, '/oauth2/token', wrong));
    expect(direct.status).toBe(401);
    expect(direct.body.error).toBe('invalid_client');
    expect(shape(direct)).toEqual(shape(walked));
  });

  it('still answers another method at a machine path with 405 and Allow: POST (RFC 9110 §15.5.6)', async () => {
    for (const method of ['get', 'put', 'delete', 'head'] as const) {
      const res = await request(t.app)[method]('/oauth2/token');
      expect(res.status, method).toBe(405);
      expect(res.headers.allow, method).toBe('POST');
    }
  });

  it('sets req.route to the endpoint route, as the stack does, for host code that reads it after the answer', async () => {
    const app = express();
    const routes: unknown[] = [];
    app.use((req, res, next) => {
      res.on('finish', () => routes.push((req.route as { path?: unknown } | undefined)?.path));
      next();
    });
    const store = createMemoryStore();
    const oauth = createTestRouter(store);
    app.use(oauth.router);
    const { client, clientSecret } = await registerClient(store, { name: 'Routes', flow: 'client_credentials' });
    await tokenAt(app, '/oauth2/token', { clientId: client.clientId, clientSecret });
    await walkingTheStack(() => tokenAt(app, '/oauth2/token', { clientId: client.clientId, clientSecret }));
    expect(routes).toEqual(['/oauth2/token', '/oauth2/token']);
  });

  it('lets an APM tool subscribed to express.router.request see the token endpoint run', async () => {
    const { result, seen } = await walkingTheStack(() => tokenAt(t.app, '/oauth2/token', t.credentialsClient));
    expect(result.status).toBe(200);
    expect(seen).toContain('POST /oauth2/token /oauth2/token');
  });

  /**
   * Serves `route` directly where it may, then posts to it: the answer names the route (Express matched it), and the
   * APM's wrapper saw the request in `seen` (the stack was walked, not the handler called as given).
   */
  async function expectWalkedBy(router: express.Router, route: DirectRoute['route'], handler: express.RequestHandler, seen: readonly string[]): Promise<void> {
    serveDirectly(router, [{ path: '/token', route, handler }]);
    const app = express();
    app.use(router);
    const res = await request(app).post('/token');
    expect(res.body).toEqual({ route: '/token' });
    expect(seen).toEqual(['/token']);
  }

  it('walks the stack for an APM tool that wraps the router\'s layers instead (OpenTelemetry\'s instrumentation-express)', async () => {
    // instrumentation-express (0.71) subscribes to no channel: it wraps each layer's handle with shimmer as the
    // layer is made, which marks the wrapper `__wrapped`, and names the request's span and `http.route` from the
    // layers it sees run. Served directly, the token endpoint's span had no route (`POST`, not `POST /oauth2/token`).
    const router = express.Router();
    const handler: express.RequestHandler = (req, res) => { res.json({ route: (req.route as { path: string }).path }); };
    const route = router.route('/token').post(handler);
    const seen: string[] = [];
    const layer = (router as unknown as { stack: { handle: (...args: unknown[]) => unknown }[] }).stack.at(-1)!;
    const original = layer.handle;
    const wrapper = function (this: unknown, ...args: unknown[]) {
      seen.push((args[0] as Request).originalUrl);
      return original.apply(this, args);
    };
    // As shimmer.wrap marks it: not enumerable.
    Object.defineProperty(wrapper, '__wrapped', { value: true, configurable: true, writable: true });
    layer.handle = wrapper;
    await expectWalkedBy(router, route, handler, seen);
  });

  it('walks the stack for an APM tool that replaces the handlers a route is given (New Relic)', async () => {
    // newrelic (13) wraps each handler route.post() is given and names the transaction from the path its wrapper
    // runs under. Served directly (the handler as given), token, revocation and introspection were one
    // transaction, `POST /`.
    const router = express.Router();
    const handler: express.RequestHandler = (req, res) => { res.json({ route: (req.route as { path: string }).path }); };
    const seen: string[] = [];
    const wrapper: express.RequestHandler = (req, res, next) => { seen.push(req.originalUrl); handler(req, res, next); };
    const route = router.route('/token').post(wrapper);
    await expectWalkedBy(router, route, handler, seen);
  });

  it("walks the stack while dd-trace listens to the layers it sees run (its channels, Express 5's and 4's)", async () => {
    // dd-trace (5) wraps the Layer prototype's dispatch, publishes each layer on apm:router:middleware:enter
    // (apm:express:… under Express 4) and names the span and `http.route` from it; served directly, a bare `POST`.
    const router = express.Router();
    const handler: express.RequestHandler = (req, res) => { res.json({ route: (req.route as { path: string }).path }); };
    const route = router.route('/token').post(handler);
    serveDirectly(router, [{ path: '/token', route, handler }]);
    // Wrapped after serveDirectly looked, so only a walk of the stack runs it: it tells a walk from a direct call.
    const inner = (route as unknown as { stack: { handle: express.RequestHandler }[] }).stack[0]!;
    const walks: string[] = [];
    inner.handle = (req, res, next) => { walks.push(req.originalUrl); handler(req, res, next); };
    const app = express();
    app.use(router);
    await request(app).post('/token?direct');
    for (const name of ['apm:router:middleware:enter', 'apm:express:middleware:enter']) {
      const subscriber = () => {};
      channel(name).subscribe(subscriber);
      try {
        const res = await request(app).post(`/token?${name}`);
        expect(res.body).toEqual({ route: '/token' });
      } finally {
        channel(name).unsubscribe(subscriber);
      }
    }
    await request(app).post('/token?direct-again');
    expect(walks).toEqual(['/token?apm:router:middleware:enter', '/token?apm:express:middleware:enter']);
  });

  it('hands an error a directly served handler throws or rejects to the host, as leaving the router would', async () => {
    const router = express.Router();
    const throws = () => { throw new Error('throws'); };
    const rejects = async () => { throw new Error('rejects'); };
    serveDirectly(router, [
      { path: '/throws', route: router.route('/throws').post(throws), handler: throws },
      { path: '/rejects', route: router.route('/rejects').post(rejects), handler: rejects },
    ]);
    const app = express();
    app.use(router);
    const onError: ErrorRequestHandler = (err: Error, _req, res, _next) => { res.status(500).json({ caught: err.message }); };
    app.use(onError);
    for (const path of ['/throws', '/rejects']) {
      const direct = await request(app).post(path);
      const { result: walked } = await walkingTheStack(() => request(app).post(path));
      expect(direct.status, path).toBe(500);
      expect(direct.body, path).toEqual({ caught: path.slice(1) });
      expect(walked.body, path).toEqual(direct.body);
    }
  });

  it('leaves every other route of the router to the stack (the metadata document, RFC 8414 §3)', async () => {
    const res = await request(t.app).get('/.well-known/oauth-authorization-server');
    expect(res.status).toBe(200);
    expect(res.body.token_endpoint).toBe(`${ISSUER}/oauth2/token`);
    const legacy = await request(t.app).get('/.well-known/oauth-authorization-server/legacy');
    expect(legacy.body.token_endpoint).toBe(`${LEGACY_ISSUER}/oauth2/token`);
  });
});

describe('requests for the host, passing through the router mounted before the host routes (the README order)', () => {
  let app: express.Express;
  let oauth: OAuthRouter;
  beforeAll(() => {
    oauth = createTestRouter(createMemoryStore(), { legacy: { issuer: LEGACY_ISSUER } });
    app = express();
    app.use(oauth.router);
    app.get('/api/v1/envelopes/:id', (req, res) => {
      res.json({ id: req.params.id, baseUrl: req.baseUrl, originalUrl: req.originalUrl, route: (req.route as { path: string }).path });
    });
    app.options('/api/v1/envelopes/:id', (_req, res) => { res.set('Allow', 'GET').status(204).end(); });
    app.use((req, res) => { res.status(404).json({ host404: req.originalUrl }); });
  });

  it('reach the host route with its params, base URL and route as if the router were not there', async () => {
    for (const path of ['/api/v1/envelopes/e1', '/api/v1/envelopes/e1?x=1', '/API/V1/ENVELOPES/e1', '/api/v1/envelopes/e%31']) {
      const res = await request(app).get(path);
      expect(res.status, path).toBe(200);
      expect(res.body, path).toMatchObject({ baseUrl: '', originalUrl: path, route: '/api/v1/envelopes/:id' });
    }
    expect((await request(app).options('/api/v1/envelopes/e1')).status).toBe(204);
    expect((await request(app).get('/nowhere/')).body).toEqual({ host404: '/nowhere/' });
  });

  it("still reach the router's own pages at every address its routes match (any case, a trailing slash)", async () => {
    for (const path of ['/oauth2/authorize', '/OAuth2/Authorize', '/oauth2/authorize/', '/legacy/oauth2/authorize?client_id=x']) {
      const res = await request(app).get(path);
      expect(res.status, path).toBe(400); // the authorize endpoint's own answer to a request without parameters
      expect(res.body.host404, path).toBeUndefined();
    }
    for (const path of ['/.well-known/oauth-authorization-server', '/.WELL-KNOWN/oauth-authorization-server/', '/.well-known/oauth-authorization-server/legacy', '/legacy/.well-known/oauth-authorization-server']) {
      const res = await request(app).get(path);
      expect(res.status, path).toBe(200);
      expect(res.body.issuer, path).toMatch(/^http:\/\/auth\.test/);
    }
  });

  it('leave paths the router cannot judge to its stack: escapes, and what parseurl would re-parse', async () => {
    // `%6F` is not decoded before matching, so neither reaches the router's routes; both reach the host.
    expect((await request(app).get('/%6Fauth2/authorize')).body).toEqual({ host404: '/%6Fauth2/authorize' });
    expect((await request(app).get('/oauth2/%61uthorize')).body).toEqual({ host404: '/oauth2/%61uthorize' });
    // An absolute-form target (RFC 9112 §3.2.2) and a fragment: parseurl takes the path out of both, and so
    // the routes match them; a token request in absolute form is served like any other.
    const server = await listen(app);
    try {
      const absolute = await rawRequest(server.port, 'GET http://auth.test/oauth2/authorize HTTP/1.1\r\nHost: auth.test\r\nConnection: close');
      expect(absolute.status).toBe(400);
      expect(absolute.body).not.toContain('host404');
      const fragment = await rawRequest(server.port, 'GET /oauth2/authorize#top HTTP/1.1\r\nHost: auth.test\r\nConnection: close');
      expect(fragment.status).toBe(400);
      expect(fragment.body).not.toContain('host404');
      // An authority no URL parser takes (a port past 65535, a bad IPv6 literal) is not the authorize endpoint's
      // to judge: it answers the query, as for any other target, never a 500.
      for (const authority of ['http://x:99999', 'http://x:65536', 'https://[zz]']) {
        // HEAD is not the authorize endpoint's (its GET may issue a code): 405 however the target reads.
        for (const [method, status] of [['GET', 400], ['HEAD', 405]] as const) {
          const bare = await rawRequest(server.port, `${method} ${authority}/oauth2/authorize?response_type=code HTTP/1.1\r\nHost: auth.test\r\nConnection: close`);
          expect(bare.status, `${method} ${authority}`).toBe(status);
          expect(bare.body).not.toContain('server_error');
        }
      }
    } finally {
      await server.close();
    }
  });

  it('see a route the host adds to the router itself afterwards', async () => {
    const store = createMemoryStore();
    const own = createTestRouter(store);
    own.router.get('/added-later', (_req, res) => { res.json({ added: true }); });
    const host = express();
    host.use(own.router);
    expect((await request(host).get('/added-later')).body).toEqual({ added: true });
  });
});

describe('the router mounted under a path (README: mount it at the root)', () => {
  it('warns once that its routes answer under that path and not at the issuer\'s addresses', async () => {
    const warnings: string[] = [];
    const oauth = createTestRouter(createMemoryStore(), { logger: { warn: (m) => warnings.push(m), error() {} } });
    const app = express();
    app.use('/auth', oauth.router);
    app.use('/api', oauth.router);
    expect((await request(app).post('/auth/oauth2/token').type('form').send({ grant_type: 'client_credentials' })).status).toBe(401);
    await request(app).get('/api/v1/envelopes');
    expect(warnings).toEqual([`express-oauth-router: oauth.router is mounted at "/auth", so its routes answer under it and not at the issuer's addresses (${ISSUER}/oauth2/…). Mount it at the root, app.use(oauth.router): the issuer's path is already part of its routes.`]);
  });

  it('says nothing when mounted at the root', async () => {
    const warnings: string[] = [];
    const oauth = createTestRouter(createMemoryStore(), { logger: { warn: (m) => warnings.push(m), error() {} } });
    const app = express();
    app.use(oauth.router);
    await request(app).post('/oauth2/token').type('form').send({ grant_type: 'client_credentials' });
    await request(app).get('/api/v1/envelopes');
    expect(warnings).toEqual([]);
  });
});
