// What the lifecycle commands do to a running server, seen over HTTP: grace periods, narrowing, delete, revoke.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { basic, createTestApp, REDIRECT_URI, type TestApp, type TestClient } from '../helpers/app.js';
import { authorizeQuery, obtainCode } from '../helpers/browser-flow.js';
import { runCli } from '../helpers/run-cli.js';
import { apiStatus, clientCredentialsToken, codeTokens, refresh } from '../helpers/token-requests.js';
import { createSqliteStore, type SqliteStore } from '../../src/stores/sqlite/index.js';
import { registerClient } from '../../src/clients/register-client.js';

let dir: string;
let storeFile: string;
let store: SqliteStore;
let host: TestApp;

/** Runs `oauth-admin ARGS --json` on the host's SQLite file, beside the running app; must succeed. */
async function admin(...args: string[]): Promise<Record<string, unknown>> {
  const result = await runCli(storeFile, [...args, '--json']);
  expect(result.stderr).toBe('');
  expect(result.code).toBe(0);
  return JSON.parse(result.stdout) as Record<string, unknown>;
}

function tokenRequest(client: TestClient): request.Test {
  return request(host.app).post('/oauth2/token').set('Authorization', basic(client)).type('form').send({ grant_type: 'client_credentials' });
}

function exchange(client: TestClient, code: string): request.Test {
  return request(host.app).post('/oauth2/token').set('Authorization', basic(client)).type('form')
    .send({ grant_type: 'authorization_code', redirect_uri: REDIRECT_URI, code });
}

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'oauth-admin-http-'));
  storeFile = join(dir, 'oauth.sqlite');
  store = createSqliteStore({ filename: storeFile, sweepIntervalSeconds: 0 });
  host = await createTestApp({}, store);
});

afterEach(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('rotate-secret with a grace period (RFC 6749 §2.3.1, RFC 6819 §5.2.3.7)', () => {
  it('during the grace period both secrets get tokens at the token endpoint, and tokens issued before stay valid', async () => {
    const old = host.credentialsClient;
    const before = await clientCredentialsToken(host.app, old);
    const rotated = await admin('clients', 'rotate-secret', old.clientId, '--grace', '1h');
    const fresh = { clientId: old.clientId, clientSecret: String(rotated['client_secret']) };
    expect((await tokenRequest(fresh)).status).toBe(200);
    expect((await tokenRequest(old)).status).toBe(200);
    expect(await apiStatus(host.app, before)).toBe(200);
  });

  it('once the grace period has ended the old secret gets 401 invalid_client and the new one keeps working', async () => {
    const old = host.credentialsClient;
    const rotated = await admin('clients', 'rotate-secret', old.clientId, '--grace', '1h');
    const fresh = { clientId: old.clientId, clientSecret: String(rotated['client_secret']) };
    const record = await store.clients.findClient(old.clientId);
    // The record as the store keeps it an instant after the grace period: same previous hash, expiry passed.
    await store.clients.updateClient(old.clientId, {
      previousClientSecretHash: record!.previousClientSecretHash!, previousClientSecretExpiresAt: new Date(Date.now() - 1),
    });
    const refused = await tokenRequest(old);
    expect(refused.status).toBe(401);
    expect(refused.body.error).toBe('invalid_client');
    expect((await tokenRequest(fresh)).status).toBe(200);
  });

  it('without --grace the old secret gets 401 at once and every token issued before is revoked', async () => {
    const old = host.credentialsClient;
    const before = await clientCredentialsToken(host.app, old);
    const rotated = await admin('clients', 'rotate-secret', old.clientId);
    expect((await tokenRequest(old)).status).toBe(401);
    expect(await apiStatus(host.app, before)).toBe(401);
    expect((await tokenRequest({ clientId: old.clientId, clientSecret: String(rotated['client_secret']) })).status).toBe(200);
  });

  it('a second --grace while the first grace period runs is refused (grace_period_running), and both secrets keep working', async () => {
    const first = host.credentialsClient;
    const rotated = await admin('clients', 'rotate-secret', first.clientId, '--grace', '7d');
    const second = { clientId: first.clientId, clientSecret: String(rotated['client_secret']) };
    const before = await store.clients.findClient(first.clientId);
    const refused = await runCli(storeFile, ['clients', 'rotate-secret', first.clientId, '--grace', '1h', '--json']);
    expect(refused.code).toBe(1);
    expect(refused.stdout).toBe('');
    expect(JSON.parse(refused.stderr)).toEqual({ error: 'grace_period_running', message: expect.stringContaining(String(rotated['previous_secret_valid_until'])) });
    expect(await store.clients.findClient(first.clientId)).toEqual(before);
    expect((await tokenRequest(first)).status).toBe(200);
    expect((await tokenRequest(second)).status).toBe(200);
  });

  it('once the grace period has ended, a rotation with --grace is allowed again', async () => {
    const first = host.credentialsClient;
    await admin('clients', 'rotate-secret', first.clientId, '--grace', '1h');
    const record = await store.clients.findClient(first.clientId);
    await store.clients.updateClient(first.clientId, {
      previousClientSecretHash: record!.previousClientSecretHash!, previousClientSecretExpiresAt: new Date(Date.now() - 1),
    });
    expect((await admin('clients', 'rotate-secret', first.clientId, '--grace', '1h'))['previous_secret_valid_until']).toEqual(expect.any(String));
  });

  it('an unplanned rotation during a grace period ends it: the secret before the first rotation stops too', async () => {
    const first = host.credentialsClient;
    await admin('clients', 'rotate-secret', first.clientId, '--grace', '1h');
    await admin('clients', 'rotate-secret', first.clientId);
    expect((await tokenRequest(first)).status).toBe(401);
  });
});

describe('clients update, as /oauth2/authorize and the token endpoint see it (RFC 6749 §3.1.2, RFC 7636)', () => {
  it('a removed redirect URI is refused at /oauth2/authorize, and a code issued for it before is refused at the token endpoint', async () => {
    const client = host.codeClient;
    const pending = await obtainCode(host.app, client);
    await admin('clients', 'update', client.clientId, '--remove-redirect-uri', REDIRECT_URI);
    const page = await request(host.app).get(`/oauth2/authorize?${authorizeQuery(client)}`);
    expect(page.status).toBe(400);
    expect(page.headers.location).toBeUndefined();
    const refused = await exchange(client, pending);
    expect(refused.status).toBe(400);
    expect(refused.body.error).toBe('invalid_grant');
  });

  it('turning PKCE on refuses authorization requests without a code_challenge and codes issued without one; tokens stay', async () => {
    const client = host.codeClient;
    const tokens = await codeTokens(host.app, client);
    const pending = await obtainCode(host.app, client);
    await admin('clients', 'update', client.clientId, '--require-pkce');
    const page = await request(host.app).get(`/oauth2/authorize?${authorizeQuery(client)}`);
    expect(page.status).toBe(302);
    expect(new URL(page.headers.location!).searchParams.get('error')).toBe('invalid_request');
    expect((await exchange(client, pending)).body.error).toBe('invalid_grant');
    expect(await apiStatus(host.app, tokens.accessToken)).toBe(200);
  });

  it('taking a scope away revokes every token of the integration, refresh tokens included', async () => {
    const client = host.codeClient;
    const tokens = await codeTokens(host.app, client);
    const updated = await admin('clients', 'update', client.clientId, '--scope', 'envelopes:read');
    expect(updated['tokens_revoked']).toBe(true);
    expect(await apiStatus(host.app, tokens.accessToken)).toBe(401);
    expect((await refresh(host.app, client, tokens.refreshToken)).status).toBe(400);
  });

  it('giving scopes to an integration registered without any (all-access) revokes its tokens, refresh tokens included', async () => {
    const register = async (flow: 'authorization_code' | 'client_credentials'): Promise<TestClient> => {
      const { client, clientSecret } = await registerClient(store, {
        name: 'SPEC integration', flow, redirectUris: flow === 'authorization_code' ? [REDIRECT_URI] : [], allowedScopes: [],
      });
      return { clientId: client.clientId, clientSecret };
    };
    const machine = await register('client_credentials');
    const user = await register('authorization_code');
    const machineToken = await clientCredentialsToken(host.app, machine);
    const userTokens = await codeTokens(host.app, user);
    const sign = (token: string) => request(host.app).get('/api/v1/sign').set('Authorization', `Bearer ${token}`);
    expect((await sign(machineToken)).status, 'all-access before the update').toBe(200);
    for (const client of [machine, user]) {
      const updated = await admin('clients', 'update', client.clientId, '--scope', 'envelopes:read');
      expect(updated['tokens_revoked']).toBe(true);
    }
    expect((await sign(machineToken)).status).toBe(401);
    expect(await apiStatus(host.app, userTokens.accessToken)).toBe(401);
    expect((await refresh(host.app, user, userTokens.refreshToken)).body.error).toBe('invalid_grant');
    const fresh = await clientCredentialsToken(host.app, machine);
    expect((await sign(fresh)).status, 'a new token is limited to envelopes:read').toBe(403);
  });

  it('adding a scope or renaming revokes nothing', async () => {
    const client = host.credentialsClient;
    const token = await clientCredentialsToken(host.app, client);
    await admin('clients', 'update', client.clientId, '--name', 'Renamed', '--scope', 'envelopes:read', '--scope', 'envelopes:sign', '--scope', 'extra');
    expect(await apiStatus(host.app, token)).toBe(200);
  });
});

describe('clients delete and tokens revoke, as requireBearer sees them (RFC 7009 §2.1)', () => {
  it('delete stops every token at requireBearer, the client gets 401, and re-creating the id revives nothing', async () => {
    const client = host.codeClient;
    const tokens = await codeTokens(host.app, client);
    await admin('clients', 'delete', client.clientId, '--yes');
    expect(await apiStatus(host.app, tokens.accessToken)).toBe(401);
    expect((await refresh(host.app, client, tokens.refreshToken)).status).toBe(401);
    const { clientSecret } = await registerClient(store, {
      clientId: client.clientId, name: 'Reborn', flow: 'authorization_code', redirectUris: [REDIRECT_URI],
    });
    expect(await apiStatus(host.app, tokens.accessToken)).toBe(401);
    expect((await refresh(host.app, { clientId: client.clientId, clientSecret }, tokens.refreshToken)).status).toBe(400);
  });

  it('tokens revoke --client revokes every token of that integration and no other', async () => {
    const machine = await clientCredentialsToken(host.app, host.credentialsClient);
    const user = await codeTokens(host.app, host.codeClient);
    await admin('tokens', 'revoke', '--client', host.credentialsClient.clientId);
    expect(await apiStatus(host.app, machine)).toBe(401);
    expect(await apiStatus(host.app, user.accessToken)).toBe(200);
    expect(await apiStatus(host.app, await clientCredentialsToken(host.app, host.credentialsClient))).toBe(200);
  });

  it('tokens revoke --user revokes that user at every integration; --client --user only at one; machine tokens stay', async () => {
    const atCode = await codeTokens(host.app, host.codeClient);
    const atLegacy = await codeTokens(host.app, host.legacyCodeClient, '/legacy');
    const machine = await clientCredentialsToken(host.app, host.credentialsClient);
    await admin('tokens', 'revoke', '--client', host.codeClient.clientId, '--user', 'user-alice');
    expect(await apiStatus(host.app, atCode.accessToken)).toBe(401);
    expect(await apiStatus(host.app, atLegacy.accessToken)).toBe(200);
    const again = await codeTokens(host.app, host.codeClient);
    const revoked = await admin('tokens', 'revoke', '--user', 'user-alice');
    expect(revoked['client_ids']).toHaveLength(4);
    expect(await apiStatus(host.app, again.accessToken)).toBe(401);
    expect(await apiStatus(host.app, atLegacy.accessToken)).toBe(401);
    expect((await refresh(host.app, host.legacyCodeClient, atLegacy.refreshToken, '/legacy')).status).toBe(400);
    expect(await apiStatus(host.app, machine)).toBe(200);
  });
});
