// Tokens issued before a scope left the `scopes` option, and integrations written straight into the store: the router
// grants no scope outside a non-empty vocabulary (RFC 6749 §3.3), so a token's unknown scope is not held at check time
// (RFC 6750 §3.1 insufficient_scope) nor reported by introspection (RFC 7662 §2.2).
import express from 'express';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerClient } from '../../src/clients/register-client.js';
import { hashSecret } from '../../src/crypto/hash-secret.js';
import type { OAuthRouterOptions } from '../../src/options.js';
import type { Store } from '../../src/stores/contract.js';
import { builtInStores, type OpenedStore } from '../helpers/built-in-stores.js';
import { REDIRECT_URI, basic, createTestRouter, type TestClient } from '../helpers/app.js';
import { authorizeQuery, hiddenField, obtainCode, signIn } from '../helpers/browser-flow.js';

const SCOPES = { 'envelopes:read': 'See your envelopes', 'envelopes:sign': 'Sign envelopes for you' };
/** The vocabulary before the host dropped `legacy:admin` from it. */
const SCOPES_BEFORE = { ...SCOPES, 'legacy:admin': 'Administer the account' };

const FORMATS: ReadonlyArray<readonly [string, Partial<OAuthRouterOptions>]> = [
  ['opaque tokens', {}],
  ['JWT access tokens under jwt.checkRevocation', { accessTokenFormat: 'jwt', jwt: { checkRevocation: true } }],
  ['JWT access tokens checked by signature', { accessTokenFormat: 'jwt' }],
];

/**
 * A host of `scopes` on `store`: the router at the root, `/api/me` for any token, a route per scope. `requireBearer`
 * requires only a scope the vocabulary holds (an OptionsError otherwise): a scope the host dropped is checked by the
 * host itself, on `req.auth`, as README's "Scopes" says a route checking scopes itself does.
 */
function createHost(store: Store, scopes: Record<string, string>, options: Partial<OAuthRouterOptions> = {}): express.Express {
  const oauth = createTestRouter(store, { scopes, ...options });
  const app = express();
  app.use(oauth.router);
  app.get('/api/me', oauth.requireBearer(), (req, res) => { res.json(req.auth); });
  const known = Object.keys(scopes).length === 0 ? Object.keys(SCOPES_BEFORE) : Object.keys(scopes);
  for (const scope of Object.keys(SCOPES_BEFORE)) {
    if (known.includes(scope)) {
      app.get(`/api/${scope}`, oauth.requireBearer({ scope }), (req, res) => { res.json(req.auth); });
    } else {
      app.get(`/api/${scope}`, oauth.requireBearer(), (req, res) => {
        if (req.auth!.allAccess || req.auth!.scope.includes(scope)) res.json(req.auth);
        else res.status(403).json({ error: 'insufficient_scope' });
      });
    }
  }
  return app;
}

async function register(store: Store, flow: 'authorization_code' | 'client_credentials', allowedScopes: string[]): Promise<TestClient> {
  const { client, clientSecret } = await registerClient(store, {
    name: 'Legacy partner', flow, redirectUris: flow === 'authorization_code' ? [REDIRECT_URI] : [], allowedScopes,
  });
  return { clientId: client.clientId, clientSecret };
}

function tokenRequest(app: express.Express, client: TestClient, form: Record<string, string>): request.Test {
  return request(app).post('/oauth2/token').set('Authorization', basic(client)).type('form').send(form);
}

function introspect(app: express.Express, client: TestClient, token: string): request.Test {
  return request(app).post('/oauth2/introspect').set('Authorization', basic(client)).type('form').send({ token });
}

describe.each(builtInStores('vocab_tokens'))('tokens on a %s store, after the host dropped a scope from its vocabulary', (_label, available, open) => {
  let opened: OpenedStore;
  beforeAll(async () => { if (available) opened = await open(); });
  afterAll(async () => { if (available) await opened.dispose(); });

  /** An access token issued while `legacy:admin` was in the vocabulary, and the host serving the same store without it. */
  async function issuedBefore(options: Partial<OAuthRouterOptions>, allowedScopes: string[]) {
    const client = await register(opened.store, 'client_credentials', allowedScopes);
    const issued = await tokenRequest(createHost(opened.store, SCOPES_BEFORE, options), client, { grant_type: 'client_credentials' });
    expect(issued.status, JSON.stringify(issued.body)).toBe(200);
    return { client, token: issued.body.access_token as string, after: createHost(opened.store, SCOPES, options) };
  }

  it.skipIf(!available).each(FORMATS)('%s: the token no longer holds the dropped scope (a route checking it on req.auth answers 403), and the route sees only the scopes still known', async (_format, options) => {
    const { token, after } = await issuedBefore(options, ['envelopes:read', 'legacy:admin']);
    // Twice each: the second answer may come from the bearer cache or the JWT verifier's memory.
    for (let round = 0; round < 2; round += 1) {
      const dropped = await request(after).get('/api/legacy:admin').set('Authorization', `Bearer ${token}`);
      expect(dropped.status, `round ${round}`).toBe(403);
      expect(dropped.body.error).toBe('insufficient_scope');
      const kept = await request(after).get('/api/envelopes:read').set('Authorization', `Bearer ${token}`);
      expect(kept.status, `round ${round}`).toBe(200);
      expect(kept.body).toMatchObject({ scope: ['envelopes:read'], allAccess: false });
      const me = await request(after).get('/api/me').set('Authorization', `Bearer ${token}`);
      expect(me.body).toMatchObject({ scope: ['envelopes:read'], allAccess: false });
    }
  });

  it.skipIf(!available).each(FORMATS)('%s: a token whose every scope was dropped is invalid_token, never a token without scope (all-access)', async (_format, options) => {
    const { token, after } = await issuedBefore(options, ['legacy:admin']);
    for (let round = 0; round < 2; round += 1) {
      for (const path of ['/api/me', '/api/legacy:admin', '/api/envelopes:read']) {
        const res = await request(after).get(path).set('Authorization', `Bearer ${token}`);
        expect(res.status, `${path}, round ${round}`).toBe(401);
        expect(res.body.error).toBe('invalid_token');
      }
    }
  });

  it.skipIf(!available).each(FORMATS)('%s: introspection leaves the dropped scope out, and a token with no scope left is {"active":false}', async (_format, options) => {
    const partly = await issuedBefore(options, ['envelopes:read', 'legacy:admin']);
    const described = await introspect(partly.after, partly.client, partly.token);
    expect(described.status).toBe(200);
    expect(described.body).toMatchObject({ active: true, scope: 'envelopes:read' });
    const wholly = await issuedBefore(options, ['legacy:admin']);
    const inactive = await introspect(wholly.after, wholly.client, wholly.token);
    expect(inactive.body).toEqual({ active: false });
  });

  it.skipIf(!available)('introspection calls a refresh token holding the dropped scope inactive: the token endpoint refuses it (invalid_grant)', async () => {
    const client = await register(opened.store, 'authorization_code', ['envelopes:read', 'legacy:admin']);
    const before = createHost(opened.store, SCOPES_BEFORE);
    const code = await obtainCode(before, client);
    const issued = await tokenRequest(before, client, { grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI });
    expect(issued.status, JSON.stringify(issued.body)).toBe(200);
    const refreshToken = issued.body.refresh_token as string;
    expect((await introspect(before, client, refreshToken)).body).toMatchObject({ active: true, token_use: 'refresh_token' });
    const after = createHost(opened.store, SCOPES);
    expect((await introspect(after, client, refreshToken)).body).toEqual({ active: false });
    const refreshed = await tokenRequest(after, client, { grant_type: 'refresh_token', refresh_token: refreshToken });
    expect(refreshed.body.error).toBe('invalid_grant');
  });

  it.skipIf(!available)('the same tokens keep every scope at a host without a vocabulary (the `scopes` option empty)', async () => {
    const { client, token } = await issuedBefore({}, ['envelopes:read', 'legacy:admin']);
    const open = createHost(opened.store, {});
    expect((await request(open).get('/api/legacy:admin').set('Authorization', `Bearer ${token}`)).status).toBe(200);
    expect((await introspect(open, client, token)).body).toMatchObject({ active: true, scope: 'envelopes:read legacy:admin' });
  });
});

describe.each(builtInStores('vocab_writes'))('integrations written straight through store.clients of a %s store (no admin check)', (_label, available, open) => {
  let opened: OpenedStore;
  beforeAll(async () => { if (available) opened = await open(); });
  afterAll(async () => { if (available) await opened.dispose(); });

  it.skipIf(!available)('an unknown scope added by store.clients.updateClient is never granted: the token carries the known ones, asking for it is invalid_scope', async () => {
    const client = await register(opened.store, 'client_credentials', ['envelopes:read']);
    await opened.store.clients.updateClient!(client.clientId, { allowedScopes: ['envelopes:read', 'legacy:admin'] });
    const app = createHost(opened.store, SCOPES);
    const granted = await tokenRequest(app, client, { grant_type: 'client_credentials' });
    expect(granted.status, JSON.stringify(granted.body)).toBe(200);
    expect(granted.body.scope).toBe('envelopes:read');
    const asked = await tokenRequest(app, client, { grant_type: 'client_credentials', scope: 'legacy:admin' });
    expect(asked.status).toBe(400);
    expect(asked.body.error).toBe('invalid_scope');
  });

  it.skipIf(!available)('an integration created by store.clients.createClient with unknown scopes only is refused invalid_scope, never given an all-access token', async () => {
    const clientSecret = 'a-secret-of-32-characters-000000';
    const clientId = `direct-${Date.now().toString(36)}`;
    const created = await opened.store.clients.createClient!({
      clientId, clientSecretHash: hashSecret(clientSecret), name: 'Written by a script', flow: 'client_credentials',
      redirectUris: [], allowedScopes: ['legacy:admin'], requirePkce: false,
      credentialsIssuedAt: new Date(), createdAt: new Date(), disabled: false,
    });
    expect(created).toBe(true);
    const res = await tokenRequest(createHost(opened.store, SCOPES), { clientId, clientSecret }, { grant_type: 'client_credentials' });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('invalid_scope');
  });
});

describe.each(builtInStores('vocab_consents'))('remembered consents on a %s store, after the host dropped a scope from its vocabulary', (_label, available, open) => {
  let opened: OpenedStore;
  beforeAll(async () => { if (available) opened = await open(); });
  afterAll(async () => { if (available) await opened.dispose(); });

  /** The connected-applications page's entry for `clientId` (its heading to its Withdraw form), as `agent` sees it. */
  async function entryOf(agent: request.Agent, clientId: string, acceptLanguage = 'en'): Promise<string | undefined> {
    const page = await agent.get('/oauth2/consents').set('Accept-Language', acceptLanguage);
    expect(page.status).toBe(200);
    return page.text.split('<li>\n<h2>').find((entry) => entry.includes(`name="client_id" value="${clientId}"`));
  }

  it.skipIf(!available)('a consent holding the dropped scope covers a request for the known scopes it holds, and the connected-applications page lists only those', async () => {
    const client = await register(opened.store, 'authorization_code', ['envelopes:read', 'legacy:admin']);
    // Allowed for both while the host still knew legacy:admin.
    await obtainCode(createHost(opened.store, SCOPES_BEFORE), client);
    const after = createHost(opened.store, SCOPES);
    const agent = request.agent(after);
    const answered = await signIn(agent, '', authorizeQuery(client));
    expect(answered.status, 'no consent page: the user approved envelopes:read').toBe(302);
    expect(new URL(answered.headers.location!).searchParams.get('code')).toBeTruthy();
    const entry = await entryOf(agent, client.clientId);
    expect(entry).toContain('<li>See your envelopes</li>');
    expect(entry).not.toContain('legacy:admin');
    expect(entry).not.toContain('Administer the account');
    expect(entry).not.toContain('Full access');
  });

  it.skipIf(!available)('a consent whose every scope was dropped covers no request, is listed as having no permission (never as full access), in the page\'s language, and can be withdrawn', async () => {
    const client = await register(opened.store, 'authorization_code', ['legacy:admin']);
    await obtainCode(createHost(opened.store, SCOPES_BEFORE), client);
    await opened.store.clients.updateClient!(client.clientId, { allowedScopes: ['envelopes:read', 'legacy:admin'] });
    // German says it in its own words; French has no such message and falls back to English.
    const pageLanguages = { catalogues: { de: { consentsNoPermissions: 'Derzeit keine Berechtigungen.' }, fr: { consentsTitle: 'Applications connectées' } } };
    const after = createHost(opened.store, SCOPES, { pageLanguages });
    const agent = request.agent(after);
    const asked = await signIn(agent, '', authorizeQuery(client));
    expect(asked.status, 'the consent page: the user never approved envelopes:read').toBe(200);
    expect(asked.text).toContain('name="decision"');
    const entry = await entryOf(agent, client.clientId);
    expect(entry).toBeDefined();
    expect(entry).not.toContain('legacy:admin');
    expect(entry).not.toContain('Full access');
    expect(entry).not.toMatch(/<ul>/);
    expect(entry).toContain('<p>No permissions at the moment.</p>');
    expect(await entryOf(agent, client.clientId, 'de')).toContain('<p>Derzeit keine Berechtigungen.</p>');
    expect(await entryOf(agent, client.clientId, 'fr')).toContain('<p>No permissions at the moment.</p>');
    const form = await agent.get('/oauth2/consents');
    const withdrawn = await agent.post('/oauth2/consents/withdraw').type('form')
      .send({ csrf_token: hiddenField(form.text, 'csrf_token'), client_id: client.clientId });
    expect(withdrawn.status).toBe(303);
    expect(await entryOf(agent, client.clientId)).toBeUndefined();
  });
});
