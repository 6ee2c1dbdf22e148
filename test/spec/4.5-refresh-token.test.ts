// SPEC §4.5 (refresh an access token), RFC 6749 §6.
import { beforeEach, describe, expect, it } from 'vitest';
import request from 'supertest';
import { basic, createTestApp, REDIRECT_URI, type TestApp, type TestClient } from '../helpers/app.js';
import { obtainCode } from '../helpers/browser-flow.js';
import type { Store } from '../../src/stores/contract.js';
import { createMemoryStore } from '../../src/stores/memory/index.js';
import { StoreUnavailableError } from '../../src/stores/store-unavailable-error.js';

describe('SPEC §4.5 refresh_token grant', () => {
  let t: TestApp;
  let tokens: { access_token: string; refresh_token: string };
  const post = (client: TestClient, fields: Record<string, string>) =>
    request(t.app).post('/oauth2/token').set('Authorization', basic(client)).type('form').send(fields);
  const refresh = (extra: Record<string, string> = {}) =>
    post(t.codeClient, { grant_type: 'refresh_token', client_id: t.codeClient.clientId, refresh_token: tokens.refresh_token, ...extra });

  beforeEach(async () => {
    t = await createTestApp();
    const code = await obtainCode(t.app, t.codeClient);
    const res = await post(t.codeClient, { grant_type: 'authorization_code', client_id: t.codeClient.clientId, redirect_uri: REDIRECT_URI, code });
    tokens = res.body;
  });

  it('returns access_token, expires_in and token_type, and no new refresh_token', async () => {
    const res = await refresh();
    expect(res.status).toBe(200);
    expect(Object.keys(res.body)).toEqual(['access_token', 'expires_in', 'token_type']);
    expect(res.body.access_token).not.toBe(tokens.access_token);
  });

  it('keeps the refresh token usable: it is not rotated', async () => {
    expect((await refresh()).status).toBe(200);
    expect((await refresh()).status).toBe(200);
  });

  it('issues an access token for the same user and integration', async () => {
    const res = await refresh();
    const me = await request(t.app).get('/api/v1/me').set('Authorization', `Bearer ${res.body.access_token}`);
    expect(me.body).toMatchObject({ clientId: t.codeClient.clientId, userId: 'user-alice' });
  });

  it('requires refresh_token (invalid_request)', async () => {
    const res = await post(t.codeClient, { grant_type: 'refresh_token' });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('invalid_request');
  });

  it('refuses an unknown refresh token (invalid_grant)', async () => {
    const res = await refresh({ refresh_token: 'nope' });
    expect(res.body.error).toBe('invalid_grant');
  });

  it('refuses an access token presented as a refresh token (invalid_grant)', async () => {
    const res = await refresh({ refresh_token: tokens.access_token });
    expect(res.body.error).toBe('invalid_grant');
  });

  it('refuses a refresh token issued to another client (invalid_grant)', async () => {
    const { registerClient } = await import('../../src/clients/register-client.js');
    const { client, clientSecret } = await registerClient(t.store, { name: 'Other', flow: 'authorization_code', redirectUris: [REDIRECT_URI] });
    const res = await post({ clientId: client.clientId, clientSecret }, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token });
    expect(res.body.error).toBe('invalid_grant');
  });

  it('may narrow the scope, never widen it (RFC 6749 §6)', async () => {
    const narrowed = await refresh({ scope: 'envelopes:read' });
    expect(narrowed.status).toBe(200);
    const me = await request(t.app).get('/api/v1/me').set('Authorization', `Bearer ${narrowed.body.access_token}`);
    expect(me.body.scope).toEqual(['envelopes:read']);
    const widened = await refresh({ scope: 'envelopes:read admin' });
    expect(widened.body.error).toBe('invalid_scope');
  });

  it('names the original grant, not the client, as what a widened refresh scope exceeds (RFC 6749 §6)', async () => {
    const widened = await refresh({ scope: 'envelopes:read admin' });
    expect(widened.status).toBe(400);
    expect(widened.body.error_description).toBe('the requested scope includes a value not in the original grant (RFC 6749 section 6)');
  });

  it('refuses a refresh token whose user was deleted (invalid_grant) and revokes the grant', async () => {
    t.deletedUsers.add('user-alice');
    expect((await refresh()).body.error).toBe('invalid_grant');
    t.deletedUsers.delete('user-alice');
    expect((await refresh()).body.error).toBe('invalid_grant');
  });

  it('refuses an expired refresh token (invalid_grant)', async () => {
    const short = await createTestApp({ refreshTokenTtl: 1 });
    const code = await obtainCode(short.app, short.codeClient);
    const issued = await request(short.app).post('/oauth2/token').set('Authorization', basic(short.codeClient)).type('form')
      .send({ grant_type: 'authorization_code', redirect_uri: REDIRECT_URI, code });
    // refreshTokenTtl 1 rounded up to a whole second: it lives 1 to 2 s.
    await new Promise((resolve) => setTimeout(resolve, 2100));
    const res = await request(short.app).post('/oauth2/token').set('Authorization', basic(short.codeClient)).type('form')
      .send({ grant_type: 'refresh_token', refresh_token: issued.body.refresh_token });
    expect(res.body.error).toBe('invalid_grant');
  });
});

describe('SPEC §4.5: the refresh token is read while the integration is authenticated (RFC 6749 §6)', () => {
  /** A memory store that records the order of its reads, and whose refresh-token read can be held or failed. */
  function watchedStore() {
    const base = createMemoryStore();
    const calls: string[] = [];
    let refreshRead: 'normal' | 'hang' | 'fail' = 'normal';
    const store: Store = {
      ...base,
      clients: { ...base.clients, findClient: (id) => { calls.push('findClient'); return base.clients.findClient(id); } },
      tokens: {
        ...base.tokens,
        findRefreshToken: (hash) => {
          calls.push('findRefreshToken');
          if (refreshRead === 'hang') return new Promise(() => {});
          if (refreshRead === 'fail') return Promise.reject(new StoreUnavailableError('refresh tokens unreachable'));
          return base.tokens.findRefreshToken(hash);
        },
      },
    };
    return { store, calls, set: (mode: typeof refreshRead) => { refreshRead = mode; } };
  }

  async function issuedRefreshToken(t: TestApp): Promise<string> {
    const code = await obtainCode(t.app, t.codeClient);
    const res = await request(t.app).post('/oauth2/token').set('Authorization', basic(t.codeClient)).type('form')
      .send({ grant_type: 'authorization_code', redirect_uri: REDIRECT_URI, code });
    return res.body.refresh_token;
  }

  it('starts the refresh token read before the integration lookup, and still answers as before', async () => {
    const watched = watchedStore();
    const t = await createTestApp({}, watched.store);
    const refreshToken = await issuedRefreshToken(t);
    watched.calls.length = 0;
    const res = await request(t.app).post('/oauth2/token').set('Authorization', basic(t.codeClient)).type('form')
      .send({ grant_type: 'refresh_token', refresh_token: refreshToken });
    expect(res.status).toBe(200);
    expect(watched.calls.slice(0, 2)).toEqual(['findRefreshToken', 'findClient']);
  });

  it('answers a failed client authentication (invalid_client) without waiting for the refresh token read', async () => {
    const watched = watchedStore();
    const t = await createTestApp({}, watched.store);
    const refreshToken = await issuedRefreshToken(t);
    watched.set('hang');
    const res = await request(t.app).post('/oauth2/token')
      .set('Authorization', basic({ clientId: t.codeClient.clientId, clientSecret: 'wrong' })).type('form')
      .send({ grant_type: 'refresh_token', refresh_token: refreshToken });
    expect(res.status).toBe(401);
    expect(res.body.error).toBe('invalid_client');
  });

  it('a refresh token read that fails after a failed authentication is no unhandled rejection; after a good one it is a 503', async () => {
    const watched = watchedStore();
    const t = await createTestApp({}, watched.store);
    const refreshToken = await issuedRefreshToken(t);
    watched.set('fail');
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      const bad = await request(t.app).post('/oauth2/token')
        .set('Authorization', basic({ clientId: t.codeClient.clientId, clientSecret: 'wrong' })).type('form')
        .send({ grant_type: 'refresh_token', refresh_token: refreshToken });
      expect(bad.status).toBe(401);
      const good = await request(t.app).post('/oauth2/token').set('Authorization', basic(t.codeClient)).type('form')
        .send({ grant_type: 'refresh_token', refresh_token: refreshToken });
      expect(good.status).toBe(503);
      // Rejections are reported after the microtasks of the turn they were made in: let one turn pass.
      await new Promise((resolve) => setImmediate(resolve));
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });
});
