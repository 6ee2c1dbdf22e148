// SPEC §4.4 (client credentials), RFC 6749 §4.4.2–4.4.3.
import { beforeAll, describe, expect, it } from 'vitest';
import request from 'supertest';
import { basic, createTestApp, type TestApp } from '../helpers/app.js';
import { registerSpecClient } from '../helpers/spec-client.js';
import { hashToken } from '../../src/crypto/hash-token.js';
import { createMemoryStore } from '../../src/stores/memory/index.js';
import { createSqliteStore } from '../../src/stores/sqlite/index.js';

describe('SPEC §4.4 client_credentials grant', () => {
  let t: TestApp;
  beforeAll(async () => { t = await createTestApp(); });
  const token = (fields: Record<string, string>) =>
    request(t.app).post('/oauth2/token').set('Authorization', basic(t.credentialsClient)).type('form').send(fields);

  it('returns access_token, expires_in and token_type, and no refresh_token', async () => {
    // An integration registered as SPEC describes (no scopes); a scoped one also gets `scope` (RFC 6749 §5.1).
    const spec = await registerSpecClient(t.store, 'client_credentials');
    const res = await request(t.app).post('/oauth2/token').set('Authorization', basic(spec)).type('form')
      .send({ grant_type: 'client_credentials', client_id: spec.clientId });
    expect(res.status).toBe(200);
    expect(Object.keys(res.body)).toEqual(['access_token', 'expires_in', 'token_type']);
    expect(res.body.refresh_token).toBeUndefined();
    expect(res.body).toMatchObject({ expires_in: 3600, token_type: 'Bearer' });
  });

  it('a token lives at least the expires_in it was issued with (RFC 6749 §5.1: "the lifetime in seconds"), at most a second more', async () => {
    for (let i = 0; i < 5; i++) {
      const before = Date.now();
      const res = await token({ grant_type: 'client_credentials' });
      const after = Date.now();
      const record = await t.store.tokens.findAccessToken(hashToken(res.body.access_token as string));
      const expiresAt = record!.expiresAt.getTime();
      expect(expiresAt % 1000, 'on a whole second, as exp states it').toBe(0);
      expect(expiresAt).toBeGreaterThanOrEqual(before + res.body.expires_in * 1000);
      expect(expiresAt).toBeLessThan(after + res.body.expires_in * 1000 + 1000);
    }
  });

  it('grants a scoped integration its registered default when none is asked, and names it in scope (RFC 6749 §3.3, §5.1)', async () => {
    const res = await token({ grant_type: 'client_credentials' });
    expect(res.body.scope).toBe('envelopes:read envelopes:sign');
    const me = await request(t.app).get('/api/v1/me').set('Authorization', `Bearer ${res.body.access_token}`);
    expect(me.body.scope).toEqual(['envelopes:read', 'envelopes:sign']);
  });

  it('narrows to the requested scope and omits scope when it equals the request', async () => {
    const res = await token({ grant_type: 'client_credentials', scope: 'envelopes:read' });
    expect(res.status).toBe(200);
    expect(res.body.scope).toBeUndefined();
    const me = await request(t.app).get('/api/v1/me').set('Authorization', `Bearer ${res.body.access_token}`);
    expect(me.body.scope).toEqual(['envelopes:read']);
  });

  it('refuses a scope the integration is not registered for (invalid_scope)', async () => {
    const res = await token({ grant_type: 'client_credentials', scope: 'envelopes:read admin' });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('invalid_scope');
  });

  it('issues a token for the integration itself: req.auth.userId is null', async () => {
    const res = await token({ grant_type: 'client_credentials' });
    const me = await request(t.app).get('/api/v1/me').set('Authorization', `Bearer ${res.body.access_token}`);
    expect(me.status).toBe(200);
    expect(me.body).toMatchObject({ clientId: t.credentialsClient.clientId, userId: null });
  });

  it('ignores username and password fields: they are not credentials here (RFC 6749 §3.2)', async () => {
    const res = await token({ grant_type: 'client_credentials', username: 'alice', password: 'x' });
    expect(res.status).toBe(200);
  });

  it('honours the configured access token lifetime in expires_in', async () => {
    const short = await createTestApp({ accessTokenTtl: 120 });
    const res = await request(short.app).post('/oauth2/token').set('Authorization', basic(short.credentialsClient)).type('form').send({ grant_type: 'client_credentials' });
    expect(res.body.expires_in).toBe(120);
  });
});

describe('SPEC §4.4 client_credentials beside a revocation of the integration\'s tokens', () => {
  /** A store whose next saveTokens first lets `revoke` commit: a revocation that lands while a request is served. */
  async function overtaken(revoke: (t: TestApp) => Promise<void>, engine: 'memory' | 'sqlite') {
    const store = engine === 'memory' ? createMemoryStore() : createSqliteStore({ filename: ':memory:', sweepIntervalSeconds: 0 });
    const t = await createTestApp({}, store);
    const save = store.tokens.saveTokens.bind(store.tokens);
    let pending = true;
    const saves: boolean[] = [];
    store.tokens.saveTokens = async (...args) => {
      if (pending) {
        pending = false;
        await revoke(t);
        // The request goes on in a later millisecond than the revocation's moment, as one does that a revocation
        // overtakes: the store refuses tokens authorized at or before that moment, to the millisecond.
        const revokedAt = Date.now();
        while (Date.now() <= revokedAt) await new Promise((resolve) => setImmediate(resolve));
      }
      const saved = await save(...args);
      saves.push(saved);
      return saved;
    };
    const res = await request(t.app).post('/oauth2/token').set('Authorization', basic(t.credentialsClient)).type('form')
      .send({ grant_type: 'client_credentials' });
    return { t, res, saves };
  }

  it.each(['memory', 'sqlite'] as const)('%s: a request overtaken by `tokens revoke --client` is served again from reads made after it: 200, a token that works', async (engine) => {
    const { t, res, saves } = await overtaken((t) => t.store.tokens.revokeClientTokens!(t.credentialsClient.clientId), engine);
    expect(res.status).toBe(200);
    expect(saves).toEqual([false, true]);
    expect((await request(t.app).get('/api/v1/me').set('Authorization', `Bearer ${res.body.access_token}`)).status).toBe(200);
  });

  it.each(['memory', 'sqlite'] as const)('%s: a request overtaken by a disable is answered as one sent after it: 401 invalid_client', async (engine) => {
    const { res, saves } = await overtaken(async (t) => {
      await t.store.clients.updateClient!(t.credentialsClient.clientId, { disabled: true });
      await t.store.tokens.revokeClientTokens!(t.credentialsClient.clientId);
    }, engine);
    expect(res.status).toBe(401);
    expect(res.body.error).toBe('invalid_client');
    expect(saves).toEqual([false]);
  });
});
