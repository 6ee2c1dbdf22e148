// RFC 6749 §3.3 scope, and the rule for integrations registered without scopes (SPEC §2 has none; DESIGN §5).
import express from 'express';
import request from 'supertest';
import { beforeAll, describe, expect, it } from 'vitest';
import { REDIRECT_URI, basic, createTestUserAuth, type TestClient } from '../helpers/app.js';
import { authorizeQuery, hiddenField, obtainCode, signIn, signInAndGetConsent } from '../helpers/browser-flow.js';
import { expectRedirectTo, getAuthorize } from '../helpers/spec-requests.js';
import { introspect } from '../helpers/token-requests.js';
import { decodeJwt } from '../helpers/jwt.js';
import { createOAuthRouter } from '../../src/router.js';
import { createMemoryStore } from '../../src/stores/memory/index.js';
import { registerClient } from '../../src/clients/register-client.js';
import { OptionsError, type OAuthRouterOptions } from '../../src/options.js';
import type { Store } from '../../src/stores/contract.js';

const SCOPES = { 'envelopes:read': 'See your envelopes', 'envelopes:sign': 'Sign envelopes for you' };
const SPEC_FIELDS_4_3 = ['access_token', 'refresh_token', 'expires_in', 'token_type'];
const SPEC_FIELDS_4_4_AND_4_5 = ['access_token', 'expires_in', 'token_type'];

/** A host with a route per scope, and integrations registered as SPEC describes (no scopes) and with scopes. */
interface ScopeHost {
  readonly app: express.Express;
  readonly store: Store;
  /** Registered without scopes, as `oauth-admin clients create --name X --flow …` does. */
  readonly specCredentials: TestClient;
  readonly specCode: TestClient;
  /** Registered with `--scope envelopes:read --scope envelopes:sign`. */
  readonly scopedCredentials: TestClient;
  readonly scopedCode: TestClient;
  /** Registered with `--scope envelopes:read` only. */
  readonly readOnlyCredentials: TestClient;
}

async function createScopeHost(options: Partial<OAuthRouterOptions> = {}): Promise<ScopeHost> {
  const store = createMemoryStore();
  const oauth = createOAuthRouter(store, createTestUserAuth(new Set()), {
    issuer: 'http://auth.test',
    session: { secret: 'test-session-secret-0123456789' },
    logger: { warn() {}, error() {} },
    scopes: SCOPES,
    ...options,
  });
  const app = express();
  app.use(oauth.router);
  app.get('/api/v1/me', oauth.requireBearer(), (req, res) => { res.json(req.auth); });
  app.get('/api/v1/envelopes', oauth.requireBearer({ scope: 'envelopes:read' }), (_req, res) => { res.json({ envelopes: [] }); });
  app.post('/api/v1/sign', oauth.requireBearer({ scope: 'envelopes:sign' }), (_req, res) => { res.json({ ok: true }); });
  const register = async (flow: 'authorization_code' | 'client_credentials', allowedScopes?: string[]): Promise<TestClient> => {
    const { client, clientSecret } = await registerClient(store, {
      name: 'Acme CRM', flow, redirectUris: flow === 'authorization_code' ? [REDIRECT_URI] : [],
      ...(allowedScopes ? { allowedScopes } : {}),
    });
    return { clientId: client.clientId, clientSecret };
  };
  return {
    app,
    store,
    specCredentials: await register('client_credentials'),
    specCode: await register('authorization_code'),
    scopedCredentials: await register('client_credentials', ['envelopes:read', 'envelopes:sign']),
    scopedCode: await register('authorization_code', ['envelopes:read', 'envelopes:sign']),
    readOnlyCredentials: await register('client_credentials', ['envelopes:read']),
  };
}

function tokenRequest(h: ScopeHost, client: TestClient, form: Record<string, string>): request.Test {
  return request(h.app).post('/oauth2/token').set('Authorization', basic(client)).type('form').send(form);
}

function clientCredentials(h: ScopeHost, client: TestClient, scope?: string): request.Test {
  return tokenRequest(h, client, { grant_type: 'client_credentials', client_id: client.clientId, ...(scope ? { scope } : {}) });
}

async function exchangeCode(h: ScopeHost, client: TestClient, query: Record<string, string> = {}): Promise<request.Response> {
  const code = await obtainCode(h.app, client, { query });
  const res = await tokenRequest(h, client, { grant_type: 'authorization_code', client_id: client.clientId, redirect_uri: REDIRECT_URI, code });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res;
}

function refresh(h: ScopeHost, client: TestClient, refreshToken: string, scope?: string): request.Test {
  return tokenRequest(h, client, { grant_type: 'refresh_token', client_id: client.clientId, refresh_token: refreshToken, ...(scope ? { scope } : {}) });
}

/** Status of each protected route for a token: [requireBearer(), envelopes:read, envelopes:sign]. */
async function routeStatuses(h: ScopeHost, token: string): Promise<number[]> {
  const auth = `Bearer ${token}`;
  return [
    (await request(h.app).get('/api/v1/me').set('Authorization', auth)).status,
    (await request(h.app).get('/api/v1/envelopes').set('Authorization', auth)).status,
    (await request(h.app).post('/api/v1/sign').set('Authorization', auth)).status,
  ];
}

async function me(h: ScopeHost, token: string): Promise<Record<string, unknown>> {
  const res = await request(h.app).get('/api/v1/me').set('Authorization', `Bearer ${token}`);
  expect(res.status).toBe(200);
  return res.body as Record<string, unknown>;
}

async function expectInsufficientScope(h: ScopeHost, token: string): Promise<void> {
  const res = await request(h.app).post('/api/v1/sign').set('Authorization', `Bearer ${token}`);
  expect(res.status).toBe(403);
  expect(res.body.error).toBe('insufficient_scope');
  expect(res.headers['www-authenticate']).toMatch(/error="insufficient_scope".*scope="envelopes:sign"$/);
}

describe('RFC 6749 §3.3: an integration registered without scopes (as SPEC describes) is all-access', () => {
  let h: ScopeHost;
  beforeAll(async () => { h = await createScopeHost(); });

  it('its client_credentials token calls routes that require a scope (200)', async () => {
    const res = await clientCredentials(h, h.specCredentials);
    expect(res.status).toBe(200);
    expect(await routeStatuses(h, res.body.access_token)).toEqual([200, 200, 200]);
  });

  it('its client_credentials response has exactly SPEC §4.4\'s fields: access_token, expires_in, token_type', async () => {
    const res = await clientCredentials(h, h.specCredentials);
    expect(Object.keys(res.body)).toEqual(SPEC_FIELDS_4_4_AND_4_5);
  });

  it('req.auth tells the host the token is all-access: allAccess true, scope empty', async () => {
    const res = await clientCredentials(h, h.specCredentials);
    expect(await me(h, res.body.access_token)).toMatchObject({ clientId: h.specCredentials.clientId, scope: [], allAccess: true });
  });

  it('asking for a scope the server knows narrows the token: a route needing another scope answers 403 insufficient_scope', async () => {
    const res = await clientCredentials(h, h.specCredentials, 'envelopes:read');
    expect(res.status).toBe(200);
    // Granted exactly as requested: scope may be left out (RFC 6749 §5.1).
    expect(Object.keys(res.body)).toEqual(SPEC_FIELDS_4_4_AND_4_5);
    expect(await routeStatuses(h, res.body.access_token)).toEqual([200, 200, 403]);
    await expectInsufficientScope(h, res.body.access_token);
    expect(await me(h, res.body.access_token)).toMatchObject({ scope: ['envelopes:read'], allAccess: false });
  });

  it('a narrowed grant that differs from the request names the granted scope (RFC 6749 §5.1)', async () => {
    const res = await clientCredentials(h, h.specCredentials, 'envelopes:read envelopes:read');
    expect(res.status).toBe(200);
    expect(res.body.scope).toBe('envelopes:read');
  });

  it('an unknown scope is invalid_scope at the token endpoint (RFC 6749 §5.2)', async () => {
    const res = await clientCredentials(h, h.specCredentials, 'envelopes:read admin');
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('invalid_scope');
  });

  it('an unknown scope is redirected as error=invalid_scope from the authorization endpoint (RFC 6749 §4.1.2.1)', async () => {
    const callback = expectRedirectTo(await getAuthorize(h.app, authorizeQuery(h.specCode, { scope: 'admin' })));
    expect(callback.searchParams.get('error')).toBe('invalid_scope');
    expect(callback.searchParams.get('state')).toBe('xyz-123');
  });

  it('the consent page says plainly that the integration gets full access to the user\'s account', async () => {
    const page = await signInAndGetConsent(request.agent(h.app), '', authorizeQuery(h.specCode));
    expect(page).toContain('full access to your account');
    const narrowed = await signInAndGetConsent(request.agent(h.app), '', authorizeQuery(h.specCode, { scope: 'envelopes:read' }));
    expect(narrowed).not.toContain('full access');
    expect(narrowed).toContain('See your envelopes');
  });

  it('authorization code and refresh without scope: all-access tokens, and exactly SPEC §4.3 and §4.5 fields', async () => {
    const exchanged = await exchangeCode(h, h.specCode);
    expect(Object.keys(exchanged.body)).toEqual(SPEC_FIELDS_4_3);
    expect(await routeStatuses(h, exchanged.body.access_token)).toEqual([200, 200, 200]);
    const refreshed = await refresh(h, h.specCode, exchanged.body.refresh_token);
    expect(refreshed.status).toBe(200);
    expect(Object.keys(refreshed.body)).toEqual(SPEC_FIELDS_4_4_AND_4_5);
    expect(await routeStatuses(h, refreshed.body.access_token)).toEqual([200, 200, 200]);
    expect(await me(h, refreshed.body.access_token)).toMatchObject({ allAccess: true, scope: [] });
  });

  it('authorization code with a scope: a narrowed grant, which refresh keeps and cannot widen (RFC 6749 §6)', async () => {
    const exchanged = await exchangeCode(h, h.specCode, { scope: 'envelopes:read' });
    expect(Object.keys(exchanged.body)).toEqual(SPEC_FIELDS_4_3);
    await expectInsufficientScope(h, exchanged.body.access_token);
    const refreshed = await refresh(h, h.specCode, exchanged.body.refresh_token);
    expect(Object.keys(refreshed.body)).toEqual(SPEC_FIELDS_4_4_AND_4_5);
    expect(await routeStatuses(h, refreshed.body.access_token)).toEqual([200, 200, 403]);
    const widened = await refresh(h, h.specCode, exchanged.body.refresh_token, 'envelopes:sign');
    expect(widened.status).toBe(400);
    expect(widened.body.error).toBe('invalid_scope');
  });

  it('an all-access grant may be narrowed at refresh to a scope the server knows, never to an unknown one', async () => {
    const exchanged = await exchangeCode(h, h.specCode);
    const narrowed = await refresh(h, h.specCode, exchanged.body.refresh_token, 'envelopes:read');
    expect(narrowed.status).toBe(200);
    expect(narrowed.body.scope).toBeUndefined();
    expect(await routeStatuses(h, narrowed.body.access_token)).toEqual([200, 200, 403]);
    const unknown = await refresh(h, h.specCode, exchanged.body.refresh_token, 'admin');
    expect(unknown.body.error).toBe('invalid_scope');
    // The grant itself stays all-access.
    const again = await refresh(h, h.specCode, exchanged.body.refresh_token);
    expect(await routeStatuses(h, again.body.access_token)).toEqual([200, 200, 200]);
  });

  it('a remembered narrow consent does not stand in for an all-access request; an all-access consent covers a narrow one', async () => {
    const host = await createScopeHost();
    await obtainCode(host.app, host.specCode, { query: { scope: 'envelopes:read' } });
    const askedAgain = await signIn(request.agent(host.app), '', authorizeQuery(host.specCode));
    expect(askedAgain.status).toBe(200);
    expect(askedAgain.text).toContain('full access to your account');
    await obtainCode(host.app, host.specCode);
    const remembered = await signIn(request.agent(host.app), '', authorizeQuery(host.specCode, { scope: 'envelopes:sign' }));
    expect(remembered.status).toBe(302);
    expect(new URL(remembered.headers.location!).searchParams.get('code')).toBeTruthy();
  });

  it('introspection of a token without a scope leaves scope out (RFC 7662 §2.2)', async () => {
    const token = (await clientCredentials(h, h.specCredentials)).body.access_token as string;
    const res = await introspect(h.app, h.specCredentials, { token });
    expect(res.body).toMatchObject({ active: true, client_id: h.specCredentials.clientId });
    expect(res.body).not.toHaveProperty('scope');
    const narrowed = (await clientCredentials(h, h.specCredentials, 'envelopes:read')).body.access_token as string;
    expect((await introspect(h.app, h.specCredentials, { token: narrowed })).body.scope).toBe('envelopes:read');
  });
});

describe('RFC 6749 §3.3, §5.1: an integration registered with scopes is narrowed to them and told what it got', () => {
  let h: ScopeHost;
  beforeAll(async () => { h = await createScopeHost(); });

  it('sending no scope grants its registered scopes, and the response names them in scope', async () => {
    const res = await clientCredentials(h, h.scopedCredentials);
    expect(res.status).toBe(200);
    expect(res.body.scope).toBe('envelopes:read envelopes:sign');
    expect(await me(h, res.body.access_token)).toMatchObject({ scope: ['envelopes:read', 'envelopes:sign'], allAccess: false });
  });

  it('a grant identical to the requested scope leaves scope out of the response', async () => {
    const res = await clientCredentials(h, h.scopedCredentials, 'envelopes:read');
    expect(Object.keys(res.body)).toEqual(SPEC_FIELDS_4_4_AND_4_5);
    expect(await routeStatuses(h, res.body.access_token)).toEqual([200, 200, 403]);
  });

  it('a scope the server knows but the integration is not registered for is invalid_scope', async () => {
    const res = await clientCredentials(h, h.readOnlyCredentials, 'envelopes:sign');
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('invalid_scope');
    const fallback = await clientCredentials(h, h.readOnlyCredentials);
    expect(fallback.body.scope).toBe('envelopes:read');
    await expectInsufficientScope(h, fallback.body.access_token);
  });

  it('scope values are case-sensitive: ENVELOPES:READ is not envelopes:read, and is invalid_scope', async () => {
    const res = await clientCredentials(h, h.scopedCredentials, 'ENVELOPES:READ');
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('invalid_scope');
  });

  it.each([
    ['a tab', 'envelopes:read\tenvelopes:sign'],
    ['two spaces', 'envelopes:read  envelopes:sign'],
    ['a leading space', ' envelopes:read'],
    ['a trailing space', 'envelopes:read '],
  ])('scope tokens are delimited by single spaces (scope-token *( SP scope-token )): %s is invalid_scope', async (_label, scope) => {
    const res = await clientCredentials(h, h.scopedCredentials, scope);
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('invalid_scope');
  });

  it('the code exchange names the registered scope it got when the authorization request sent none', async () => {
    const exchanged = await exchangeCode(h, h.scopedCode);
    expect(exchanged.body.scope).toBe('envelopes:read envelopes:sign');
    const narrowed = await exchangeCode(h, h.scopedCode, { scope: 'envelopes:read' });
    expect(narrowed.body.scope).toBeUndefined();
    // Refresh without scope asks for the grant's scope (RFC 6749 §6) and gets exactly it.
    const refreshed = await refresh(h, h.scopedCode, exchanged.body.refresh_token);
    expect(Object.keys(refreshed.body)).toEqual(SPEC_FIELDS_4_4_AND_4_5);
    expect(await me(h, refreshed.body.access_token)).toMatchObject({ scope: ['envelopes:read', 'envelopes:sign'], allAccess: false });
  });
});

/**
 * Narrowing through the package revokes (test/cli/lifecycle-http.test.ts); these narrow with the store's own
 * `updateClient`, which revokes nothing, as two updates at once or a tool writing the store would leave it.
 */
describe('RFC 6749 §3.3, §6: no code or refresh token mints a scope its integration may no longer be granted', () => {
  const narrow = (h: ScopeHost, client: TestClient, allowedScopes: string[]) => h.store.clients.updateClient!(client.clientId, { allowedScopes });

  async function expectRefused(res: request.Response | request.Test): Promise<void> {
    const answered = await res;
    expect(answered.status, JSON.stringify(answered.body)).toBe(400);
    expect(answered.body.error).toBe('invalid_grant');
    expect(answered.body.error_description).toMatch(/no longer allowed for this client; authorize again$/);
  }

  it('a refresh token of a grant with a scope the integration lost is invalid_grant, even when it asks for less', async () => {
    const h = await createScopeHost();
    const both = await exchangeCode(h, h.scopedCode);
    const readOnly = await exchangeCode(h, h.scopedCode, { scope: 'envelopes:read' });
    await narrow(h, h.scopedCode, ['envelopes:read']);
    await expectRefused(refresh(h, h.scopedCode, both.body.refresh_token));
    await expectRefused(refresh(h, h.scopedCode, both.body.refresh_token, 'envelopes:read'));
    const kept = await refresh(h, h.scopedCode, readOnly.body.refresh_token);
    expect(kept.status, 'a grant within the new scopes refreshes as before').toBe(200);
  });

  it('an all-access refresh token is invalid_grant once its integration has scopes; a grant within them refreshes', async () => {
    const h = await createScopeHost();
    const allAccess = await exchangeCode(h, h.specCode);
    const readOnly = await exchangeCode(h, h.specCode, { scope: 'envelopes:read' });
    await narrow(h, h.specCode, ['envelopes:read']);
    await expectRefused(refresh(h, h.specCode, allAccess.body.refresh_token));
    const kept = await refresh(h, h.specCode, readOnly.body.refresh_token);
    expect(kept.status).toBe(200);
    expect(await routeStatuses(h, kept.body.access_token)).toEqual([200, 200, 403]);
  });

  it('a code issued for a scope the integration lost is invalid_grant at the exchange, all-access codes included', async () => {
    const h = await createScopeHost();
    for (const client of [h.scopedCode, h.specCode]) {
      const code = await obtainCode(h.app, client);
      await narrow(h, client, ['envelopes:read']);
      await expectRefused(tokenRequest(h, client, { grant_type: 'authorization_code', redirect_uri: REDIRECT_URI, code }));
    }
  });

  it('widening refuses nothing: scopes added, or every scope taken off (all-access)', async () => {
    const h = await createScopeHost();
    const both = await exchangeCode(h, h.scopedCode);
    await narrow(h, h.scopedCode, ['envelopes:read', 'envelopes:sign', 'envelopes:admin']);
    expect((await refresh(h, h.scopedCode, both.body.refresh_token)).status).toBe(200);
    await narrow(h, h.scopedCode, []);
    expect((await refresh(h, h.scopedCode, both.body.refresh_token)).status).toBe(200);
  });

  it('with allAccessWithoutScopes off, a grant without a scope grants nothing to lose: scopes given later refuse it not', async () => {
    const h = await createScopeHost({ allAccessWithoutScopes: false });
    const unscoped = await exchangeCode(h, h.specCode);
    await narrow(h, h.specCode, ['envelopes:read']);
    const refreshed = await refresh(h, h.specCode, unscoped.body.refresh_token);
    expect(refreshed.status, JSON.stringify(refreshed.body)).toBe(200);
    expect(await routeStatuses(h, refreshed.body.access_token)).toEqual([200, 403, 403]);
  });
});

describe('allAccessWithoutScopes: false makes every integration scoped', () => {
  let h: ScopeHost;
  beforeAll(async () => { h = await createScopeHost({ allAccessWithoutScopes: false }); });

  it('a token without a scope answers 403 insufficient_scope on a scoped route, and passes requireBearer() alone', async () => {
    const res = await clientCredentials(h, h.specCredentials);
    expect(res.status).toBe(200);
    expect(Object.keys(res.body)).toEqual(SPEC_FIELDS_4_4_AND_4_5);
    expect(await routeStatuses(h, res.body.access_token)).toEqual([200, 403, 403]);
    await expectInsufficientScope(h, res.body.access_token);
    expect(await me(h, res.body.access_token)).toMatchObject({ scope: [], allAccess: false });
  });

  it('an integration without scopes cannot ask for one (invalid_scope)', async () => {
    const res = await clientCredentials(h, h.specCredentials, 'envelopes:read');
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('invalid_scope');
  });

  it('authorization code and refresh: the tokens pass no scoped route, and the consent page promises no full access', async () => {
    const page = await signInAndGetConsent(request.agent(h.app), '', authorizeQuery(h.specCode));
    expect(page).not.toContain('full access');
    const exchanged = await exchangeCode(h, h.specCode);
    expect(Object.keys(exchanged.body)).toEqual(SPEC_FIELDS_4_3);
    expect(await routeStatuses(h, exchanged.body.access_token)).toEqual([200, 403, 403]);
    const refreshed = await refresh(h, h.specCode, exchanged.body.refresh_token);
    expect(await routeStatuses(h, refreshed.body.access_token)).toEqual([200, 403, 403]);
  });

  it('the connected-applications page lists a consent without a scope with neither full access nor "no permissions": its tokens reach the routes requiring none', async () => {
    // A host of its own: the other cases' sign-ins already remembered the consent.
    const own = await createScopeHost({ allAccessWithoutScopes: false });
    const agent = request.agent(own.app);
    const page = await signInAndGetConsent(agent, '', authorizeQuery(own.specCode));
    const allowed = await agent.post('/oauth2/consent').type('form')
      .send({ csrf_token: hiddenField(page, 'csrf_token'), request_id: hiddenField(page, 'request_id'), decision: 'allow' });
    expect(allowed.status).toBe(303);
    const consents = await agent.get('/oauth2/consents');
    expect(consents.text).toContain(`name="client_id" value="${own.specCode.clientId}"`);
    expect(consents.text).not.toContain('Full access');
    expect(consents.text).not.toContain('No permissions');
  });

  it('scoped integrations work as before', async () => {
    const res = await clientCredentials(h, h.scopedCredentials);
    expect(res.body.scope).toBe('envelopes:read envelopes:sign');
    expect(await routeStatuses(h, res.body.access_token)).toEqual([200, 200, 200]);
  });

  it('the option must be a boolean: anything else throws at start-up, naming the key', async () => {
    await expect(createScopeHost({ allAccessWithoutScopes: 'no' as unknown as boolean })).rejects.toThrow(/allAccessWithoutScopes/);
  });
});

describe('requireBearer requires only scopes the server knows', () => {
  /** A router on an empty store, with the vocabulary `scopes`. */
  function routerOf(scopes: Record<string, string>) {
    return createOAuthRouter(createMemoryStore(), createTestUserAuth(new Set()), {
      issuer: 'http://auth.test', session: { secret: 'test-session-secret-0123456789' }, logger: { warn() {}, error() {} }, scopes,
    });
  }

  it('a scope outside a non-empty scopes option is an OptionsError when requireBearer is called, naming it and the known ones', () => {
    const oauth = routerOf(SCOPES);
    for (const scope of ['envelopes:raed', ['envelopes:read', 'envelopes:raed'], 'envelopes:read envelopes:raed']) {
      let thrown: unknown;
      try { oauth.requireBearer({ scope }); } catch (err) { thrown = err; }
      expect(thrown, JSON.stringify(scope)).toBeInstanceOf(OptionsError);
      expect((thrown as Error).message).toBe('express-oauth-router: option "requireBearer.scope" names "envelopes:raed", which is not a key '
        + 'of the scopes option (envelopes:read, envelopes:sign): no token limited to scopes could ever reach the route');
    }
    expect(() => oauth.requireBearer({ scope: 'envelopes:read envelopes:sign' })).not.toThrow();
  });

  it('a scope that is not a scope-token is an OptionsError when requireBearer is called, with or without a vocabulary', () => {
    for (const oauth of [routerOf(SCOPES), routerOf({})]) {
      for (const [scope, named] of [['envelopes:read\tenvelopes:sign', 'envelopes:read\tenvelopes:sign'], [['envelopes:read', 'envelopes read'], 'envelopes read'], [['"quoted"'], '"quoted"']] as const) {
        let thrown: unknown;
        try { oauth.requireBearer({ scope }); } catch (err) { thrown = err; }
        expect(thrown, JSON.stringify(scope)).toBeInstanceOf(OptionsError);
        expect((thrown as Error).message).toBe(`express-oauth-router: option "requireBearer.scope" names ${JSON.stringify(named)}, `
          + 'which is not a valid scope-token (RFC 6749 §3.3)');
      }
    }
  });

  it('without a vocabulary (the scopes option empty) any scope-token may be required, and a token holding it passes', async () => {
    const store = createMemoryStore();
    const oauth = createOAuthRouter(store, createTestUserAuth(new Set()), {
      issuer: 'http://auth.test', session: { secret: 'test-session-secret-0123456789' }, logger: { warn() {}, error() {} },
    });
    const app = express();
    app.use(oauth.router);
    app.get('/api/v1/reports', oauth.requireBearer({ scope: 'reports:read' }), (_req, res) => { res.json({ ok: true }); });
    const { client, clientSecret } = await registerClient(store, { name: 'Reports', flow: 'client_credentials', redirectUris: [], allowedScopes: ['reports:read'] });
    const issued = await request(app).post('/oauth2/token').set('Authorization', basic({ clientId: client.clientId, clientSecret }))
      .type('form').send({ grant_type: 'client_credentials' });
    expect(issued.body.scope).toBe('reports:read');
    expect((await request(app).get('/api/v1/reports').set('Authorization', `Bearer ${issued.body.access_token}`)).status).toBe(200);
  });
});

describe('RFC 9068 JWT access tokens follow the same rule', () => {
  let h: ScopeHost;
  let off: ScopeHost;
  beforeAll(async () => {
    h = await createScopeHost({ accessTokenFormat: 'jwt' });
    off = await createScopeHost({ accessTokenFormat: 'jwt', allAccessWithoutScopes: false });
  });

  it('a token without a scope has no scope claim and verifies as all-access', async () => {
    const res = await clientCredentials(h, h.specCredentials);
    expect(Object.keys(res.body)).toEqual(SPEC_FIELDS_4_4_AND_4_5);
    expect(decodeJwt(res.body.access_token).claims).not.toHaveProperty('scope');
    expect(await routeStatuses(h, res.body.access_token)).toEqual([200, 200, 200]);
    expect(await me(h, res.body.access_token)).toMatchObject({ scope: [], allAccess: true });
  });

  it('a narrowed token carries the scope claim and is refused by a route needing another scope', async () => {
    const res = await clientCredentials(h, h.specCredentials, 'envelopes:read');
    expect(decodeJwt(res.body.access_token).claims.scope).toBe('envelopes:read');
    await expectInsufficientScope(h, res.body.access_token);
    expect(await me(h, res.body.access_token)).toMatchObject({ scope: ['envelopes:read'], allAccess: false });
  });

  it('authorization code and refresh without scope give all-access JWTs', async () => {
    const exchanged = await exchangeCode(h, h.specCode);
    expect(Object.keys(exchanged.body)).toEqual(SPEC_FIELDS_4_3);
    expect(await routeStatuses(h, exchanged.body.access_token)).toEqual([200, 200, 200]);
    const refreshed = await refresh(h, h.specCode, exchanged.body.refresh_token);
    expect(decodeJwt(refreshed.body.access_token).claims).not.toHaveProperty('scope');
    expect(await routeStatuses(h, refreshed.body.access_token)).toEqual([200, 200, 200]);
  });

  it('with the option off, a JWT without a scope claim answers 403 insufficient_scope on a scoped route', async () => {
    const res = await clientCredentials(off, off.specCredentials);
    expect(await routeStatuses(off, res.body.access_token)).toEqual([200, 403, 403]);
    await expectInsufficientScope(off, res.body.access_token);
  });
});
