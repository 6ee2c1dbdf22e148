// SPEC §5.3 and RFC 6750: bearer tokens on the signature API, via requireBearer().
import { beforeAll, describe, expect, it } from 'vitest';
import request from 'supertest';
import { basic, createTestApp, type TestApp } from '../helpers/app.js';
import { hashToken } from '../../src/crypto/hash-token.js';

const REALM = 'Bearer realm="http://auth.test"';

describe('RFC 6750 bearer token usage (requireBearer)', () => {
  let t: TestApp;
  let fullToken: string;
  let readOnlyToken: string;
  const issue = async (scope?: string) => (await request(t.app).post('/oauth2/token').set('Authorization', basic(t.credentialsClient))
    .type('form').send({ grant_type: 'client_credentials', ...(scope ? { scope } : {}) })).body.access_token as string;
  beforeAll(async () => {
    t = await createTestApp();
    fullToken = await issue();
    readOnlyToken = await issue('envelopes:read');
  });
  const me = () => request(t.app).get('/api/v1/me');

  it('lets a valid token through and sets req.auth', async () => {
    const res = await me().set('Authorization', `Bearer ${fullToken}`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ clientId: t.credentialsClient.clientId, userId: null, scope: ['envelopes:read', 'envelopes:sign'] });
  });

  it('accepts the scheme name case-insensitively (RFC 6750 §2.1, RFC 9110 §11.1)', async () => {
    expect((await me().set('Authorization', `bearer ${fullToken}`)).status).toBe(200);
  });

  it('answers 401 with a bare Bearer challenge and no error code when no token is sent (RFC 6750 §3.1)', async () => {
    const res = await me();
    expect(res.status).toBe(401);
    expect(res.headers['www-authenticate']).toBe(REALM);
    expect(res.body, 'no error code or other error information').toEqual({});
  });

  it('treats another scheme as no bearer credentials (401, bare challenge)', async () => {
    const res = await me().set('Authorization', basic(t.credentialsClient));
    expect(res.status).toBe(401);
    expect(res.headers['www-authenticate']).toBe(REALM);
  });

  it('ignores a token in the query string (RFC 9700 §2.4.2; RFC 6750 §2.3 SHOULD NOT)', async () => {
    const res = await request(t.app).get(`/api/v1/me?access_token=${fullToken}`);
    expect(res.status).toBe(401);
    expect(res.headers['www-authenticate']).toBe(REALM);
  });

  it('answers 400 invalid_request for a malformed Bearer header', async () => {
    for (const header of ['Bearer', 'Bearer ', 'Bearer a b', 'Bearer to:ken']) {
      const res = await me().set('Authorization', header);
      expect(res.status, header).toBe(400);
      expect(res.body.error).toBe('invalid_request');
      expect(res.headers['www-authenticate']).toMatch(/^Bearer realm="http:\/\/auth\.test", error="invalid_request", error_description="[^"]+"$/);
    }
  });

  it('answers 401 invalid_token for an unknown token', async () => {
    const res = await me().set('Authorization', 'Bearer unknown-token');
    expect(res.status).toBe(401);
    expect(res.body.error).toBe('invalid_token');
    expect(res.headers['www-authenticate']).toMatch(/^Bearer realm="http:\/\/auth\.test", error="invalid_token", error_description="/);
  });

  it('answers 401 invalid_token for an expired token', async () => {
    const short = await createTestApp({ accessTokenTtl: 1 });
    const token = (await request(short.app).post('/oauth2/token').set('Authorization', basic(short.credentialsClient))
      .type('form').send({ grant_type: 'client_credentials' })).body.access_token as string;
    expect((await request(short.app).get('/api/v1/me').set('Authorization', `Bearer ${token}`)).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 2100));
    const res = await request(short.app).get('/api/v1/me').set('Authorization', `Bearer ${token}`);
    expect(res.status).toBe(401);
    expect(res.body.error).toBe('invalid_token');
  });

  it('answers 401 invalid_token for a revoked token', async () => {
    const token = await issue();
    await t.store.tokens.revokeAccessToken(hashToken(token));
    const res = await me().set('Authorization', `Bearer ${token}`);
    expect(res.status).toBe(401);
    expect(res.body.error).toBe('invalid_token');
  });

  it('refuses a refresh token used as an access token', async () => {
    const { obtainCode } = await import('../helpers/browser-flow.js');
    const { REDIRECT_URI } = await import('../helpers/app.js');
    const code = await obtainCode(t.app, t.codeClient);
    const tokens = (await request(t.app).post('/oauth2/token').set('Authorization', basic(t.codeClient)).type('form')
      .send({ grant_type: 'authorization_code', redirect_uri: REDIRECT_URI, code })).body;
    expect((await me().set('Authorization', `Bearer ${tokens.refresh_token}`)).status).toBe(401);
  });

  it('answers 403 insufficient_scope with the required scope when the token lacks it (RFC 6750 §3.1)', async () => {
    const res = await request(t.app).get('/api/v1/sign').set('Authorization', `Bearer ${readOnlyToken}`);
    expect(res.status).toBe(403);
    expect(res.body.error).toBe('insufficient_scope');
    expect(res.headers['www-authenticate']).toMatch(/error="insufficient_scope".*scope="envelopes:sign"$/);
    expect((await request(t.app).get('/api/v1/sign').set('Authorization', `Bearer ${fullToken}`)).status).toBe(200);
  });

  it('a route requiring several scopes refuses a token holding only some of them (403 insufficient_scope naming all)', async () => {
    const { default: express } = await import('express');
    const { createTestRouter } = await import('../helpers/app.js');
    const oauth = createTestRouter(t.store);
    const host = express();
    host.get('/both', oauth.requireBearer({ scope: 'envelopes:read envelopes:sign' }), (_req, res) => { res.json({}); });
    host.get('/both-listed', oauth.requireBearer({ scope: ['envelopes:sign', 'envelopes:read'] }), (_req, res) => { res.json({}); });
    for (const path of ['/both', '/both-listed']) {
      const res = await request(host).get(path).set('Authorization', `Bearer ${readOnlyToken}`);
      expect(res.status, path).toBe(403);
      expect(res.body.error).toBe('insufficient_scope');
      expect(res.headers['www-authenticate']).toMatch(/scope="envelopes:(read envelopes:sign|sign envelopes:read)"$/);
      expect((await request(host).get(path).set('Authorization', `Bearer ${fullToken}`)).status, path).toBe(200);
    }
  });

  it('a handler that changes req.auth changes what no later request is given, the same token served from the cache included', async () => {
    const { default: express } = await import('express');
    const { createTestRouter } = await import('../helpers/app.js');
    const oauth = createTestRouter(t.store);
    const host = express();
    host.get('/careless', oauth.requireBearer(), (req, res) => {
      // A host bug: widening what it was handed (the type says readonly; plain JavaScript does not).
      (req.auth!.scope as string[]).push('envelopes:sign');
      res.json({});
    });
    host.get('/sign', oauth.requireBearer({ scope: 'envelopes:sign' }), (_req, res) => { res.json({}); });
    for (let i = 0; i < 3; i += 1) expect((await request(host).get('/careless').set('Authorization', `Bearer ${readOnlyToken}`)).status).toBe(200);
    const res = await request(host).get('/sign').set('Authorization', `Bearer ${readOnlyToken}`);
    expect(res.status).toBe(403);
    expect(res.body.error).toBe('insufficient_scope');
  });

  it('answers 401 invalid_token for a token its store still hands back past its expiry (a store clock behind this one)', async () => {
    const { default: express } = await import('express');
    const { createTestRouter } = await import('../helpers/app.js');
    const lagging = {
      ...t.store,
      tokens: {
        ...t.store.tokens,
        findAccessToken: async (hash: string) => {
          const record = await t.store.tokens.findAccessToken(hash);
          return record && { ...record, expiresAt: new Date(Date.now() - 1000) };
        },
      },
    };
    const oauth = createTestRouter(lagging);
    const host = express();
    host.get('/api', oauth.requireBearer(), (_req, res) => { res.json({}); });
    const res = await request(host).get('/api').set('Authorization', `Bearer ${fullToken}`);
    expect(res.status).toBe(401);
    expect(res.body.error).toBe('invalid_token');
  });

  it('marks its error responses as not cacheable', async () => {
    const res = await me().set('Authorization', 'Bearer unknown-token');
    expect(res.headers['cache-control']).toContain('no-store');
  });

  // RFC 9111 §3.5 bars a shared cache from storing an answer to a request with Authorization, but nginx's proxy_cache
  // does not look at Authorization: behind `proxy_cache_valid 200 1m` (a common setting for an API), a route written
  // as the README shows (`res.json(...)`, no Cache-Control) was served from the cache to a request with no token at all
  // (nginx 1.22, an audit behind real caches). A route the token admitted is marked no-store unless the host says
  // otherwise, before or after the check.
  it('marks the answer of a route it admitted as not storable, unless the host set its own Cache-Control', async () => {
    const { default: express } = await import('express');
    const { createTestRouter } = await import('../helpers/app.js');
    const oauth = createTestRouter(t.store);
    const host = express();
    host.get('/api/v1/me', oauth.requireBearer(), (req, res) => { res.json(req.auth); });
    host.get('/api/v1/after', oauth.requireBearer(), (_req, res) => { res.set('Cache-Control', 'private, max-age=60').json({}); });
    host.get('/api/v1/before', (_req, res, next) => { res.set('Cache-Control', 'private, max-age=30'); next(); }, oauth.requireBearer(),
      (_req, res) => { res.json({}); });
    const admitted = await request(host).get('/api/v1/me').set('Authorization', `Bearer ${fullToken}`);
    expect([admitted.status, admitted.headers['cache-control']]).toEqual([200, 'no-store']);
    const after = await request(host).get('/api/v1/after').set('Authorization', `Bearer ${fullToken}`);
    expect([after.status, after.headers['cache-control']]).toEqual([200, 'private, max-age=60']);
    const before = await request(host).get('/api/v1/before').set('Authorization', `Bearer ${fullToken}`);
    expect([before.status, before.headers['cache-control']]).toEqual([200, 'private, max-age=30']);
  });

  // A host's request timeout (connect-timeout, a hand-written one) answers 503 while the store lookup is still pending,
  // then the lookup admits or refuses the token. Nothing more can be said on that answer; setting no-store on it threw
  // ERR_HTTP_HEADERS_SENT from the middleware's promise, which Express 4 ignores: an unhandled rejection ends Node 20.
  it('says nothing more on an answer the host already sent while the token was looked up (a request timeout)', async () => {
    const { default: express } = await import('express');
    const { createTestRouter } = await import('../helpers/app.js');
    const slow = { ...t.store, tokens: { ...t.store.tokens, async findAccessToken(hash: string) {
      await new Promise((resolve) => setTimeout(resolve, 30));
      return t.store.tokens.findAccessToken(hash);
    } } };
    const oauth = createTestRouter(slow);
    const outcomes: unknown[] = [];
    const host = express();
    const bearer = oauth.requireBearer();
    host.get('/api/v1/me', (_req, res, next) => { setTimeout(() => res.status(503).json({ error: 'timeout' }), 5); next(); },
      (req, res, next) => { void Promise.resolve(bearer(req, res, next)).then(() => outcomes.push('settled'), (err: unknown) => outcomes.push(err)); },
      (_req, _res, next) => { outcomes.push('handler'); next(); });
    for (const token of [fullToken, 'no-such-token']) {
      outcomes.length = 0;
      const res = await request(host).get('/api/v1/me').set('Authorization', `Bearer ${token}`);
      expect([res.status, res.headers['cache-control']]).toEqual([503, undefined]);
      await new Promise((resolve) => setTimeout(resolve, 60));
      expect(outcomes).toEqual(token === fullToken ? ['handler', 'settled'] : ['settled']);
    }
  });

  it('leaves the host\'s own security headers as the host set them (no HSTS, framing or XSS header of the token endpoint\'s)', async () => {
    const { default: express } = await import('express');
    const { createTestRouter } = await import('../helpers/app.js');
    const oauth = createTestRouter(t.store);
    const host = express();
    // A host that chose no HSTS and the modern X-XSS-Protection: 0, as helmet sets it.
    host.use((_req, res, next) => { res.setHeader('X-XSS-Protection', '0'); res.setHeader('X-Frame-Options', 'SAMEORIGIN'); next(); });
    host.get('/api/v1/me', oauth.requireBearer(), (_req, res) => { res.json({}); });
    host.get('/health/ready', oauth.health.readiness);
    for (const res of [
      await request(host).get('/api/v1/me'),
      await request(host).get('/api/v1/me').set('Authorization', 'Bearer unknown-token'),
      await request(host).get('/health/ready'),
    ]) {
      expect([200, 401]).toContain(res.status);
      expect(res.headers['strict-transport-security']).toBeUndefined();
      expect(res.headers['x-xss-protection']).toBe('0');
      expect(res.headers['x-frame-options']).toBe('SAMEORIGIN');
      expect(res.headers['cache-control']).toBe('no-store');
      expect(res.headers['content-type']).toBe('application/json;charset=UTF-8');
      expect(res.headers['x-content-type-options']).toBe('nosniff');
    }
  });

  it('answers 503 temporarily_unavailable, without internals, when the store fails', async () => {
    const { default: express } = await import('express');
    const { createOAuthRouter } = await import('../../src/router.js');
    const { createTestUserAuth, ISSUER } = await import('../helpers/app.js');
    const outage = Object.assign(new Error('connect ECONNREFUSED 10.0.0.1:5432'), { name: 'StoreUnavailableError' });
    const broken = { ...t.store, tokens: { ...t.store.tokens, findAccessToken: async () => { throw outage; } } };
    const oauth = createOAuthRouter(broken, createTestUserAuth(new Set()), { issuer: ISSUER, session: { secret: 'x'.repeat(32) }, logger: { warn() {}, error() {} } });
    const host = express();
    host.get('/api', oauth.requireBearer(), (_req, res) => { res.end('ok'); });
    const res = await request(host).get('/api').set('Authorization', `Bearer ${fullToken}`);
    expect(res.status).toBe(503);
    expect(res.body.error).toBe('temporarily_unavailable');
    expect(res.text).not.toContain('ECONNREFUSED');
  });
});
