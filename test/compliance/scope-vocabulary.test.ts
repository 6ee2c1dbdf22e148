// The server's scope vocabulary (the `scopes` option): an integration is registered with scopes from it only (RFC 7591
// §3.2.2 invalid_client_metadata), and the router never grants a scope outside it, whatever a store holds (RFC 6749 §3.3).
import express from 'express';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { REDIRECT_URI, basic, createTestUserAuth, type TestClient } from '../helpers/app.js';
import { authorizeQuery, obtainCode } from '../helpers/browser-flow.js';
import { expectRedirectTo, getAuthorize } from '../helpers/spec-requests.js';
import { createOAuthRouter } from '../../src/router.js';
import { createOAuthAdmin } from '../../src/admin/create-oauth-admin.js';
import { createMemoryStore } from '../../src/stores/memory/index.js';
import { registerClient } from '../../src/clients/register-client.js';
import { UnknownScopeError } from '../../src/clients/client-errors.js';
import { parseImportFile } from '../../src/clients/import-file.js';
import type { OAuthRouterOptions } from '../../src/options.js';
import type { Store } from '../../src/stores/contract.js';

const SCOPES = { 'envelopes:read': 'See your envelopes', 'envelopes:sign': 'Sign envelopes for you' };

/** A host over `store` with a route per scope; `scopes` is its vocabulary (none: the option left out). */
function createHost(store: Store, scopes: OAuthRouterOptions['scopes'] | undefined) {
  const oauth = createOAuthRouter(store, createTestUserAuth(new Set()), {
    issuer: 'http://auth.test',
    session: { secret: 'test-session-secret-0123456789' },
    logger: { warn() {}, error() {} },
    ...(scopes ? { scopes } : {}),
  });
  const app = express();
  app.use(oauth.router);
  return { app, oauth };
}

/**
 * Registered straight into the store, without a vocabulary: as an earlier version, a provisioning script, or
 * `oauth-admin` without OAUTH_SCOPES did, or before the server dropped a scope from its `scopes` option.
 */
async function registerUnchecked(store: Store, flow: 'authorization_code' | 'client_credentials', allowedScopes: string[]): Promise<TestClient> {
  const { client, clientSecret } = await registerClient(store, {
    name: 'Legacy partner', flow, redirectUris: flow === 'authorization_code' ? [REDIRECT_URI] : [], allowedScopes,
  });
  return { clientId: client.clientId, clientSecret };
}

function tokenRequest(app: express.Express, client: TestClient, form: Record<string, string>): request.Test {
  return request(app).post('/oauth2/token').set('Authorization', basic(client)).type('form').send(form);
}

describe('the router grants no scope outside its `scopes` option (RFC 6749 §3.3)', () => {
  it('an integration registered with an unknown scope gets only the scopes the server knows, and asking for the other is invalid_scope', async () => {
    const store = createMemoryStore();
    const { app } = createHost(store, SCOPES);
    const client = await registerUnchecked(store, 'client_credentials', ['envelopes:read', 'legacy:admin']);
    const granted = await tokenRequest(app, client, { grant_type: 'client_credentials' });
    expect(granted.status, JSON.stringify(granted.body)).toBe(200);
    expect(granted.body.scope, 'scope differs from the registered default, so it is sent (RFC 6749 §5.1)').toBe('envelopes:read');
    const asked = await tokenRequest(app, client, { grant_type: 'client_credentials', scope: 'legacy:admin' });
    expect(asked.status).toBe(400);
    expect(asked.body.error).toBe('invalid_scope');
  });

  it('an integration registered with unknown scopes only is refused, never given a token without scope (all-access)', async () => {
    const store = createMemoryStore();
    const { app } = createHost(store, SCOPES);
    const client = await registerUnchecked(store, 'client_credentials', ['legacy:admin']);
    const res = await tokenRequest(app, client, { grant_type: 'client_credentials' });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('invalid_scope');
    const code = await registerUnchecked(store, 'authorization_code', ['legacy:admin']);
    const callback = expectRedirectTo(await getAuthorize(app, authorizeQuery(code)));
    expect(callback.searchParams.get('error')).toBe('invalid_scope');
  });

  it('an authorization request is granted the known scopes only, and one asking for an unknown scope is redirected with invalid_scope', async () => {
    const store = createMemoryStore();
    const { app } = createHost(store, SCOPES);
    const client = await registerUnchecked(store, 'authorization_code', ['envelopes:read', 'legacy:admin']);
    const code = await obtainCode(app, client);
    const res = await tokenRequest(app, client, { grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.scope).toBe('envelopes:read');
    const asked = expectRedirectTo(await getAuthorize(app, authorizeQuery(client, { scope: 'envelopes:read legacy:admin' })));
    expect(asked.searchParams.get('error')).toBe('invalid_scope');
  });

  it('a refresh token of a grant holding a scope the server no longer knows is refused: the user authorizes again', async () => {
    const store = createMemoryStore();
    const before = createHost(store, undefined);
    const client = await registerUnchecked(store, 'authorization_code', ['envelopes:read', 'legacy:admin']);
    const code = await obtainCode(before.app, client);
    const issued = await tokenRequest(before.app, client, { grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI });
    expect(issued.status, JSON.stringify(issued.body)).toBe(200);
    const after = createHost(store, SCOPES);
    const refreshed = await tokenRequest(after.app, client, { grant_type: 'refresh_token', refresh_token: issued.body.refresh_token });
    expect(refreshed.status).toBe(400);
    expect(refreshed.body.error).toBe('invalid_grant');
  });

  it('a server without the `scopes` option keeps no vocabulary: an integration is granted the scopes it was registered with, as before', async () => {
    const store = createMemoryStore();
    const { app } = createHost(store, undefined);
    const client = await registerUnchecked(store, 'client_credentials', ['legacy:admin']);
    const res = await tokenRequest(app, client, { grant_type: 'client_credentials' });
    expect(res.status).toBe(200);
    expect(res.body.scope).toBe('legacy:admin');
  });
});

describe('registration refuses a scope outside the vocabulary (RFC 7591 §3.2.2 invalid_client_metadata)', () => {
  it("the router's oauth.admin refuses it on create, update and import, naming the scope, and writes nothing", async () => {
    const store = createMemoryStore();
    const { oauth } = createHost(store, SCOPES);
    const refusal = oauth.admin.createClient({ name: 'Acme', flow: 'client_credentials', allowedScopes: ['envelopes:read', 'envelopes:raed'] });
    await expect(refusal).rejects.toThrow(UnknownScopeError);
    await expect(refusal).rejects.toThrow(/"envelopes:raed".*invalid_client_metadata/);
    await expect(refusal).rejects.toMatchObject({ error: 'invalid_client_metadata', scopes: ['envelopes:raed'] });
    // Still a TypeError, the admin API's error for bad input (and the CLI's usage_error).
    await expect(refusal).rejects.toThrow(TypeError);
    expect(await oauth.admin.listClients()).toEqual([]);

    const { client } = await oauth.admin.createClient({ name: 'Acme', flow: 'client_credentials', allowedScopes: ['envelopes:read'] });
    await expect(oauth.admin.updateClient(client.clientId, { allowedScopes: ['envelopes:read', 'admin'] })).rejects.toThrow(UnknownScopeError);
    expect((await oauth.admin.getClient(client.clientId))!.allowedScopes).toEqual(['envelopes:read']);

    const rows = parseImportFile(JSON.stringify({
      client_id: 'partner-7', client_secret: 'a-secret-of-32-characters-000000', name: 'Partner 7', flow: 'client_credentials',
      scopes: ['admin'], credentials_issued_at: '2019-03-01',
    }), 'jsonl');
    const report = await oauth.admin.importClients(rows);
    expect(report.refused).toBe(true);
    // The refused value is shown as its field's name, as every import message shows a cell (it could hold a secret).
    expect(report.rows[0]).toMatchObject({ outcome: 'invalid', message: expect.stringMatching(/not among the scopes this server knows.*invalid_client_metadata/) });
    expect(await oauth.admin.getClient('partner-7')).toBeNull();
    // An import's own `scopes` (empty: "no vocabulary") does not lift the router's: oauth.admin knows it.
    expect((await oauth.admin.importClients(rows, { scopes: [] })).refused).toBe(true);
    expect((await oauth.admin.importClients(rows, { scopes: ['admin'] })).refused).toBe(true);
    expect(await oauth.admin.getClient('partner-7')).toBeNull();
  });

  it('oauth.admin of a router without a scopes option checks an import against the import\'s own scopes, so no token carries a scope outside them', async () => {
    const store = createMemoryStore();
    const { app, oauth } = createHost(store, undefined);
    const rows = parseImportFile(JSON.stringify({
      client_id: 'partner-8', client_secret: 'a-secret-of-32-characters-000000', name: 'Partner 8', flow: 'client_credentials',
      scopes: ['admin'], credentials_issued_at: '2019-03-01',
    }), 'jsonl');
    // The router has no vocabulary of its own (an empty one): the one the import is given is the only check there is.
    const report = await oauth.admin.importClients(rows, { scopes: Object.keys(SCOPES) });
    expect(report.refused).toBe(true);
    expect(report.rows[0]).toMatchObject({ outcome: 'invalid' });
    expect(await oauth.admin.getClient('partner-8')).toBeNull();
    const token = await request(app).post('/oauth2/token').type('form')
      .set('Authorization', basic({ clientId: 'partner-8', clientSecret: 'a-secret-of-32-characters-000000' }))
      .send({ grant_type: 'client_credentials', scope: 'admin' });
    expect(token.status).toBe(401);
    expect(token.body.access_token).toBeUndefined();
  });

  it('createOAuthAdmin checks against the scopes it is given, and without them (another process, no vocabulary) accepts any scope-token as before', async () => {
    const store = createMemoryStore();
    const checked = createOAuthAdmin(store, { scopes: Object.keys(SCOPES) });
    await expect(checked.createClient({ name: 'Acme', flow: 'client_credentials', allowedScopes: ['admin'] })).rejects.toThrow(UnknownScopeError);
    const { client } = await checked.createClient({ name: 'Acme', flow: 'client_credentials', allowedScopes: ['envelopes:sign'] });
    expect(client.allowedScopes).toEqual(['envelopes:sign']);
    const unchecked = createOAuthAdmin(store);
    const updated = await unchecked.updateClient(client.clientId, { allowedScopes: ['admin'] });
    expect(updated.client.allowedScopes).toEqual(['admin']);
  });
});
