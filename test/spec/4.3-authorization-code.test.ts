// SPEC §4.3 (exchange an authorization code), RFC 6749 §4.1.3, §4.1.2 (single use, replay revokes), §5.1–5.2.
import { beforeEach, describe, expect, it } from 'vitest';
import request from 'supertest';
import { basic, createTestApp, REDIRECT_URI, type TestApp, type TestClient } from '../helpers/app.js';
import { obtainCode } from '../helpers/browser-flow.js';
import { createMemoryStore } from '../../src/stores/memory/index.js';
import { gateSaveTokens } from '../helpers/gate-save-tokens.js';
import { registerSpecClient } from '../helpers/spec-client.js';

describe('SPEC §4.3 authorization_code grant', () => {
  let t: TestApp;
  beforeEach(async () => { t = await createTestApp(); });

  const exchange = (client: TestClient, fields: Record<string, string>) =>
    request(t.app).post('/oauth2/token').set('Authorization', basic(client)).type('form').send(fields);
  const fields = (code: string, extra: Record<string, string> = {}) =>
    ({ grant_type: 'authorization_code', client_id: t.codeClient.clientId, redirect_uri: REDIRECT_URI, code, ...extra });

  it('returns access_token, refresh_token, expires_in and token_type Bearer', async () => {
    // An integration registered as SPEC describes (no scopes); a scoped one also gets `scope` (RFC 6749 §5.1).
    const spec = await registerSpecClient(t.store, 'authorization_code');
    const res = await exchange(spec, { ...fields(await obtainCode(t.app, spec)), client_id: spec.clientId });
    expect(res.status).toBe(200);
    expect(Object.keys(res.body)).toEqual(['access_token', 'refresh_token', 'expires_in', 'token_type']);
    expect(res.body).toMatchObject({ expires_in: 3600, token_type: 'Bearer' });
    expect(res.body.access_token).toMatch(/^[0-9a-v]{11}\.[A-Za-z0-9_-]{43}$/);
    expect(res.body.refresh_token).toMatch(/^[0-9a-v]{11}\.[A-Za-z0-9_-]{43}$/);
    expect(res.body.refresh_token).not.toBe(res.body.access_token);
  });

  it('issues a token that identifies the user and the integration', async () => {
    const res = await exchange(t.codeClient, fields(await obtainCode(t.app, t.codeClient)));
    const me = await request(t.app).get('/api/v1/me').set('Authorization', `Bearer ${res.body.access_token}`);
    expect(me.status).toBe(200);
    expect(me.body).toMatchObject({ clientId: t.codeClient.clientId, userId: 'user-alice', issuer: 'http://auth.test' });
  });

  it('requires code (invalid_request)', async () => {
    const { code: _omit, ...rest } = fields('x');
    const res = await exchange(t.codeClient, rest);
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('invalid_request');
  });

  it('requires redirect_uri (invalid_request)', async () => {
    const { redirect_uri: _omit, ...rest } = fields(await obtainCode(t.app, t.codeClient));
    const res = await exchange(t.codeClient, rest);
    expect(res.body.error).toBe('invalid_request');
  });

  it('refuses an unknown code with invalid_grant', async () => {
    const res = await exchange(t.codeClient, fields('not-a-code'));
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('invalid_grant');
  });

  it('refuses a redirect_uri other than the one of the authorization request (invalid_grant)', async () => {
    const code = await obtainCode(t.app, t.codeClient);
    const res = await exchange(t.codeClient, fields(code, { redirect_uri: 'http://localhost:8080/cb?tenant=a%20b' }));
    expect(res.body.error).toBe('invalid_grant');
  });

  it('uses up the code even when the redirect_uri was wrong: one try per code', async () => {
    const code = await obtainCode(t.app, t.codeClient);
    await exchange(t.codeClient, fields(code, { redirect_uri: `${REDIRECT_URI}/x` }));
    const res = await exchange(t.codeClient, fields(code));
    expect(res.body.error).toBe('invalid_grant');
  });

  it('refuses a code issued to another client (invalid_grant)', async () => {
    const { registerClient } = await import('../../src/clients/register-client.js');
    const { client, clientSecret } = await registerClient(t.store, { name: 'Other', flow: 'authorization_code', redirectUris: [REDIRECT_URI] });
    const other = { clientId: client.clientId, clientSecret };
    const code = await obtainCode(t.app, t.codeClient);
    const res = await exchange(other, { ...fields(code), client_id: other.clientId });
    expect(res.body.error).toBe('invalid_grant');
  });

  it('is single use: a second exchange is invalid_grant', async () => {
    const code = await obtainCode(t.app, t.codeClient);
    expect((await exchange(t.codeClient, fields(code))).status).toBe(200);
    const again = await exchange(t.codeClient, fields(code));
    expect(again.status).toBe(400);
    expect(again.body.error).toBe('invalid_grant');
  });

  it('revokes the access and refresh tokens issued from a replayed code (RFC 6749 §4.1.2)', async () => {
    const code = await obtainCode(t.app, t.codeClient);
    const first = await exchange(t.codeClient, fields(code));
    await exchange(t.codeClient, fields(code));
    const me = await request(t.app).get('/api/v1/me').set('Authorization', `Bearer ${first.body.access_token}`);
    expect(me.status).toBe(401);
    const refreshed = await exchange(t.codeClient, { grant_type: 'refresh_token', client_id: t.codeClient.clientId, refresh_token: first.body.refresh_token });
    expect(refreshed.body.error).toBe('invalid_grant');
  });

  it('of 20 concurrent exchanges of one code at most one gets tokens, the rest invalid_grant, and none of its tokens work after', async () => {
    const code = await obtainCode(t.app, t.codeClient);
    const results = await Promise.all(Array.from({ length: 20 }, () => exchange(t.codeClient, fields(code))));
    const winners = results.filter((r) => r.status === 200);
    expect(winners.length).toBeLessThanOrEqual(1);
    expect(results.filter((r) => r.body.error === 'invalid_grant')).toHaveLength(20 - winners.length);
    for (const winner of winners) {
      const me = await request(t.app).get('/api/v1/me').set('Authorization', `Bearer ${winner.body.access_token}`);
      expect(me.status).toBe(401);
    }
  });

  it('of 20 concurrent exchanges on the SQLite store at most one gets tokens, and none of its tokens work after', async () => {
    const { createSqliteStore } = await import('../../src/stores/sqlite/index.js');
    const { mkdtempSync, rmSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const dir = mkdtempSync(join(tmpdir(), 'eor-race-'));
    const store = createSqliteStore({ filename: join(dir, 'oauth.sqlite') });
    try {
      const s = await createTestApp({}, store);
      const code = await obtainCode(s.app, s.codeClient);
      const results = await Promise.all(Array.from({ length: 20 }, () => request(s.app).post('/oauth2/token')
        .set('Authorization', basic(s.codeClient)).type('form')
        .send({ grant_type: 'authorization_code', redirect_uri: REDIRECT_URI, code })));
      const winners = results.filter((r) => r.status === 200);
      expect(winners.length).toBeLessThanOrEqual(1);
      for (const winner of winners) {
        expect((await request(s.app).get('/api/v1/me').set('Authorization', `Bearer ${winner.body.access_token}`)).status).toBe(401);
      }
    } finally {
      await store.close?.();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a replay that overtakes the first redemption before it saved: both get invalid_grant and no token exists', async () => {
    const gated = gateSaveTokens(createMemoryStore());
    const g = await createTestApp({}, gated.store);
    const code = await obtainCode(g.app, g.codeClient);
    const send = () => request(g.app).post('/oauth2/token').set('Authorization', basic(g.codeClient)).type('form')
      .send({ grant_type: 'authorization_code', client_id: g.codeClient.clientId, redirect_uri: REDIRECT_URI, code });
    const first = send().then((r) => r);
    const saving = await gated.reached;
    const replay = await send();
    expect(replay.body.error).toBe('invalid_grant');
    gated.open();
    const firstResult = await first;
    expect(firstResult.status).toBe(400);
    expect(firstResult.body.error).toBe('invalid_grant');
    expect(await g.store.tokens.findAccessToken(saving.access.tokenHash)).toBeNull();
    expect(await g.store.tokens.findRefreshToken(saving.refresh!.tokenHash)).toBeNull();
  });

  it('refuses the code when the user was deleted in the meantime (invalid_grant)', async () => {
    const code = await obtainCode(t.app, t.codeClient);
    t.deletedUsers.add('user-alice');
    const res = await exchange(t.codeClient, fields(code));
    expect(res.body.error).toBe('invalid_grant');
  });

  it('echoes the narrowed scope only when it differs from the requested one (RFC 6749 §5.1)', async () => {
    const code = await obtainCode(t.app, t.codeClient, { query: { scope: 'envelopes:read' } });
    const res = await exchange(t.codeClient, fields(code));
    expect(res.status).toBe(200);
    expect(res.body.scope).toBeUndefined();
    const me = await request(t.app).get('/api/v1/me').set('Authorization', `Bearer ${res.body.access_token}`);
    expect(me.body.scope).toEqual(['envelopes:read']);
  });

  it('stores codes and tokens only as hashes', async () => {
    const code = await obtainCode(t.app, t.codeClient);
    const res = await exchange(t.codeClient, fields(code));
    const { hashToken } = await import('../../src/crypto/hash-token.js');
    expect(await t.store.tokens.findAccessToken(res.body.access_token)).toBeNull();
    expect(await t.store.tokens.findAccessToken(hashToken(res.body.access_token))).not.toBeNull();
    expect(await t.store.tokens.findRefreshToken(hashToken(res.body.refresh_token))).not.toBeNull();
  });
});
