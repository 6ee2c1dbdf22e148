// The example API called by integrations registered with the built CLI exactly as the README shows, without --scope.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createSqliteStore, type SqliteStore } from 'express-oauth-router/stores/sqlite';
import { createApp } from '../../example-app/app.js';
import { createDemoUserAuth } from '../../example-app/users.js';
import { runCli } from '../helpers/run-cli.js';

const AUTH_URL = 'http://localhost:3000';

function basic(clientId: string, secret: string): string {
  return `Basic ${Buffer.from(`${clientId}:${secret}`).toString('base64')}`;
}

describe('example app: an integration registered as SPEC describes (no scopes) calls the API', () => {
  let dir: string;
  let store: SqliteStore;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'spec-integration-'));
  });

  afterEach(async () => {
    await store?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('oauth-admin clients create --flow client_credentials (no --scope): its token reaches every route, with SPEC §4.4 fields', async () => {
    const file = join(dir, 'oauth.sqlite');
    const created = await runCli(file, ['clients', 'create', '--name', 'Nightly sync', '--flow', 'client_credentials', '--json']);
    expect(created.code, created.stderr).toBe(0);
    const { client_id: clientId, client_secret: clientSecret } = JSON.parse(created.stdout) as { client_id: string; client_secret: string };

    store = createSqliteStore({ filename: file });
    const userAuth = await createDemoUserAuth({ username: 'demo', password: 'correct horse battery' });
    const { app } = createApp({ store, userAuth, authUrl: AUTH_URL, sessionSecret: 'a-session-secret-of-32-characters' });

    const token = await request(app).post('/oauth2/token').set('Authorization', basic(clientId, clientSecret)).type('form')
      .send({ grant_type: 'client_credentials', client_id: clientId });
    expect(token.status).toBe(200);
    expect(Object.keys(token.body)).toEqual(['access_token', 'expires_in', 'token_type']);
    const bearer = `Bearer ${String(token.body.access_token)}`;

    const posted = await request(app).post('/api/v1/envelopes').set('Authorization', bearer).send({ title: 'NDA' });
    expect(posted.status).toBe(201);
    const listed = await request(app).get('/api/v1/envelopes').set('Authorization', bearer);
    expect(listed.status).toBe(200);
    expect(listed.body.envelopes).toHaveLength(1);
    const me = await request(app).get('/api/v1/me').set('Authorization', bearer);
    expect(me.body).toMatchObject({ client_id: clientId, client_name: 'Nightly sync', scope: '', all_access: true });

    // A scope it asks for limits its token; one the API does not know is refused.
    const narrowed = await request(app).post('/oauth2/token').set('Authorization', basic(clientId, clientSecret)).type('form')
      .send({ grant_type: 'client_credentials', client_id: clientId, scope: 'envelopes:read' });
    expect(narrowed.status).toBe(200);
    const readOnly = `Bearer ${String(narrowed.body.access_token)}`;
    expect((await request(app).get('/api/v1/envelopes').set('Authorization', readOnly)).status).toBe(200);
    const refused = await request(app).post('/api/v1/envelopes').set('Authorization', readOnly).send({ title: 'NDA' });
    expect(refused.status).toBe(403);
    expect(refused.headers['www-authenticate']).toMatch(/error="insufficient_scope"/);
    const unknown = await request(app).post('/oauth2/token').set('Authorization', basic(clientId, clientSecret)).type('form')
      .send({ grant_type: 'client_credentials', client_id: clientId, scope: 'admin' });
    expect(unknown.body.error).toBe('invalid_scope');
  });
});
