// `oauth-admin clients enable` after `disable`, seen from the token endpoint: new tokens again, revoked ones stay revoked.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { basic, createTestApp, type TestApp } from '../helpers/app.js';
import { obtainCode } from '../helpers/browser-flow.js';
import { runCli } from '../helpers/run-cli.js';
import { apiStatus, clientCredentialsToken, codeTokens, refresh } from '../helpers/token-requests.js';
import { createSqliteStore, type SqliteStore } from '../../src/stores/sqlite/index.js';
import { REDIRECT_URI } from '../helpers/app.js';

let dir: string;
let storeFile: string;
let store: SqliteStore;
let host: TestApp;

/** Runs `oauth-admin clients ARGS` on the host's SQLite file, as an operator would beside the running app. */
async function admin(...args: string[]): Promise<void> {
  const result = await runCli(storeFile, ['clients', ...args]);
  expect(result.stderr).toBe('');
  expect(result.code).toBe(0);
}

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'oauth-admin-enable-'));
  storeFile = join(dir, 'oauth.sqlite');
  store = createSqliteStore({ filename: storeFile, sweepIntervalSeconds: 0 });
  host = await createTestApp({}, store);
});

afterEach(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('clients enable (RFC 6749 §2.3, RFC 7009 §2.1)', () => {
  it('a client_credentials integration authenticates again; its token from before the disable stays revoked', async () => {
    const client = host.credentialsClient;
    const before = await clientCredentialsToken(host.app, client);
    expect(await apiStatus(host.app, before)).toBe(200);

    await admin('disable', client.clientId);
    const refused = await request(host.app).post('/oauth2/token').set('Authorization', basic(client)).type('form')
      .send({ grant_type: 'client_credentials' });
    expect(refused.status).toBe(401);
    expect(refused.body.error).toBe('invalid_client');
    expect(await apiStatus(host.app, before)).toBe(401);

    await admin('enable', client.clientId);
    const after = await clientCredentialsToken(host.app, client);
    expect(await apiStatus(host.app, after)).toBe(200);
    expect(await apiStatus(host.app, before)).toBe(401);
  });

  it('an authorization_code integration: new grants work; the old refresh token and an unredeemed code stay dead', async () => {
    const client = host.codeClient;
    const old = await codeTokens(host.app, client);
    const unredeemed = await obtainCode(host.app, client);

    await admin('disable', client.clientId);
    await admin('enable', client.clientId);

    expect(await apiStatus(host.app, old.accessToken)).toBe(401);
    const refreshed = await refresh(host.app, client, old.refreshToken);
    expect(refreshed.status).toBe(400);
    expect(refreshed.body.error).toBe('invalid_grant');
    const redeemed = await request(host.app).post('/oauth2/token').set('Authorization', basic(client)).type('form')
      .send({ grant_type: 'authorization_code', redirect_uri: REDIRECT_URI, code: unredeemed });
    expect(redeemed.status).toBe(400);
    expect(redeemed.body.error).toBe('invalid_grant');

    const fresh = await codeTokens(host.app, client);
    expect(await apiStatus(host.app, fresh.accessToken)).toBe(200);
    expect((await refresh(host.app, client, fresh.refreshToken)).status).toBe(200);
  });

  it('enabling an enabled integration changes nothing, and the secret from a rotation while disabled is kept', async () => {
    const client = host.credentialsClient;
    await admin('enable', client.clientId);
    await admin('disable', client.clientId);
    const rotated = await runCli(storeFile, ['clients', 'rotate-secret', client.clientId, '--json']);
    const clientSecret = String((JSON.parse(rotated.stdout) as Record<string, unknown>)['client_secret']);
    await admin('enable', client.clientId);
    const refused = await request(host.app).post('/oauth2/token').set('Authorization', basic(client)).type('form')
      .send({ grant_type: 'client_credentials' });
    expect(refused.status).toBe(401);
    expect(await apiStatus(host.app, await clientCredentialsToken(host.app, { ...client, clientSecret }))).toBe(200);
  });
});
