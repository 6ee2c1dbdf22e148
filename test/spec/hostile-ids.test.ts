// Identifiers from a request (client ids, tokens, codes, request ids, usernames, host user ids) are checked
// before any store sees them: a NUL byte or an over-long id is a 4xx on every store, with no error logged.
import express from 'express';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMemoryStore } from '../../src/stores/memory/index.js';
import { createOAuthRouter } from '../../src/router.js';
import { basic, createTestApp, USER, type TestApp } from '../helpers/app.js';
import { authorizeQuery, hiddenField, obtainCode } from '../helpers/browser-flow.js';
import { builtInStores, type OpenedStore } from '../helpers/built-in-stores.js';

// An id with a NUL byte (PostgreSQL refuses it in text), one over 255 characters, and one with a C1 control.
const BAD_IDS = ['a\u0000b', 'x'.repeat(300), 'a\u0085b'];

function basicFor(clientId: string, secret: string): string {
  return `Basic ${Buffer.from(`${encodeURIComponent(clientId)}:${encodeURIComponent(secret)}`).toString('base64')}`;
}

describe.each(builtInStores('hostile_ids'))('on the %s store', (_name, available, open) => {
  let opened: OpenedStore;
  let t: TestApp;
  const logged: string[] = [];

  beforeAll(async () => {
    if (!available) return;
    opened = await open();
    t = await createTestApp({
      loginRateLimit: false,
      clientAuthRateLimit: false,
      logger: { warn: (line: string) => { logged.push(line); }, error: (line: string) => { logged.push(line); } },
    }, opened.store);
  });
  afterAll(async () => { if (available) await opened.dispose(); });

  /** No request above left a line in the log: nothing reached a store that could not take it. */
  const expectNothingLogged = () => expect(logged.filter((line) => !/session/i.test(line))).toEqual([]);

  it.skipIf(!available)('token endpoint: a bad client_id in the form or in Basic credentials is 401 invalid_client', async () => {
    for (const id of BAD_IDS) {
      const posted = await request(t.app).post('/oauth2/token').type('form')
        .send(new URLSearchParams({ grant_type: 'client_credentials', client_id: id, client_secret: 'x' }).toString());
      expect(posted.status).toBe(401);
      expect(posted.body.error).toBe('invalid_client');
      const viaBasic = await request(t.app).post('/oauth2/token').set('Authorization', basicFor(id, 'x')).type('form')
        .send('grant_type=client_credentials');
      expect(viaBasic.status).toBe(401);
    }
    expectNothingLogged();
  });

  it.skipIf(!available)('revocation and introspection: a bad client_id is 401; a bad token is no token', async () => {
    for (const id of BAD_IDS) {
      for (const path of ['/oauth2/revoke', '/oauth2/introspect']) {
        const res = await request(t.app).post(path).set('Authorization', basicFor(id, 'x')).type('form').send('token=abc');
        expect(res.status, path).toBe(401);
      }
      const revoked = await request(t.app).post('/oauth2/revoke').set('Authorization', basic(t.codeClient)).type('form')
        .send(new URLSearchParams({ token: id, token_type_hint: 'refresh_token' }).toString());
      expect(revoked.status).toBe(200);
      const introspected = await request(t.app).post('/oauth2/introspect').set('Authorization', basic(t.codeClient)).type('form')
        .send(new URLSearchParams({ token: id }).toString());
      expect(introspected.body).toEqual({ active: false });
    }
    expectNothingLogged();
  });

  it.skipIf(!available)('token endpoint: a bad code or refresh token is invalid_grant', async () => {
    for (const id of BAD_IDS) {
      const code = await request(t.app).post('/oauth2/token').set('Authorization', basic(t.codeClient)).type('form')
        .send(new URLSearchParams({ grant_type: 'authorization_code', code: id, redirect_uri: 'https://client.example/callback' }).toString());
      expect(code.status).toBe(400);
      expect(code.body.error).toBe('invalid_grant');
      const refresh = await request(t.app).post('/oauth2/token').set('Authorization', basic(t.codeClient)).type('form')
        .send(new URLSearchParams({ grant_type: 'refresh_token', refresh_token: id }).toString());
      expect(refresh.body.error).toBe('invalid_grant');
    }
    expectNothingLogged();
  });

  it.skipIf(!available)('authorization endpoint: a bad client_id is an error page, never a 5xx', async () => {
    for (const id of BAD_IDS) {
      const res = await request(t.app).get(`/oauth2/authorize?${authorizeQuery(t.codeClient, { client_id: id })}`);
      expect(res.status).toBe(400);
      expect(res.text).toContain('invalid_client');
    }
    expectNothingLogged();
  });

  it.skipIf(!available)('requireBearer: a bad bearer token is 401 (it is only ever hashed)', async () => {
    const res = await request(t.app).get('/api/v1/me').set('Authorization', 'Bearer a\u0085b');
    expect([400, 401]).toContain(res.status);
    expectNothingLogged();
  });

  it.skipIf(!available)('withdraw form: a bad client_id is a 400 page, and the integration keeps its consent', async () => {
    await obtainCode(t.app, t.codeClient);
    const agent = request.agent(t.app);
    const login = await agent.get('/oauth2/consents');
    const posted = await agent.post('/oauth2/login').type('form').send({
      csrf_token: hiddenField(login.text, 'csrf_token'), request_id: hiddenField(login.text, 'request_id'),
      username: USER.username, password: USER.password,
    });
    expect(posted.status).toBe(303);
    const page = await agent.get('/oauth2/consents');
    expect(page.text).toContain('Acme CRM');
    for (const id of BAD_IDS) {
      const res = await agent.post('/oauth2/consents/withdraw').type('form')
        .send({ csrf_token: hiddenField(page.text, 'csrf_token'), client_id: id });
      expect(res.status).toBe(400);
    }
    expect((await agent.get('/oauth2/consents')).text).toContain('Acme CRM');
    expectNothingLogged();
  });
});

describe('identifiers that never reach the host or a store', () => {
  /** A host whose directory records every lookup, and whose currentUser can be told to misbehave. */
  function createHost(hostUserId: string | null) {
    const lookups: string[] = [];
    const logged: string[] = [];
    const store = createMemoryStore();
    const oauth = createOAuthRouter(store, {
      async verifyCredentials(username, password) {
        lookups.push(username);
        return username === USER.username && password === USER.password ? { id: USER.id, displayName: 'Alice' } : null;
      },
      ...(hostUserId !== null ? { currentUser: async () => ({ id: hostUserId, displayName: 'Mallory' }) } : {}),
    }, {
      issuer: 'http://auth.test',
      session: { secret: 'test-session-secret-0123456789' },
      loginRateLimit: false,
      logger: { warn: () => {}, error: (line: string) => { logged.push(line); } },
    });
    const app = express();
    app.use(oauth.router);
    return { app, store, lookups, logged };
  }

  it('a username with a control character, or over 255 characters, fails like a wrong password without asking the host', async () => {
    const host = createHost(null);
    for (const username of ['alice\u0000', 'a'.repeat(256), 'al\u0085ice']) {
      const agent = request.agent(host.app);
      const login = await agent.get('/oauth2/consents');
      const res = await agent.post('/oauth2/login').type('form').send({
        csrf_token: hiddenField(login.text, 'csrf_token'), request_id: hiddenField(login.text, 'request_id'),
        username, password: USER.password,
      });
      expect(res.status).toBe(400);
      expect(res.text).toContain('The username or password is incorrect.');
    }
    expect(host.lookups).toEqual([]);
    expect(host.logged).toEqual([]);
  });

  it('a host currentUser with a NUL byte in its id is a host bug: 500, logged by name, and no store call', async () => {
    const host = createHost('user\u0000evil');
    const res = await request(host.app).get('/oauth2/consents');
    expect(res.status).toBe(500);
    expect(res.text).not.toContain('user\u0000evil');
    expect(host.logged).toHaveLength(1);
    expect(host.logged[0]).toContain('userAuth.currentUser returned a user whose id');
  });

  it('a consent form whose request_id is not one the server hands out (__proto__, constructor) has expired', async () => {
    const t = await createTestApp({ loginRateLimit: false });
    const agent = request.agent(t.app);
    const login = await agent.get('/oauth2/consents');
    await agent.post('/oauth2/login').type('form').send({
      csrf_token: hiddenField(login.text, 'csrf_token'), request_id: hiddenField(login.text, 'request_id'),
      username: USER.username, password: USER.password,
    });
    const page = await agent.get('/oauth2/consents');
    for (const requestId of ['__proto__', 'constructor', 'a\u0000b']) {
      const res = await agent.post('/oauth2/consent').type('form')
        .send({ csrf_token: hiddenField(page.text, 'csrf_token'), request_id: requestId, decision: 'allow' });
      expect(res.status, requestId).toBe(400);
      expect(res.text).toContain('expired');
    }
  });

  it('withdrawConsent (from code) refuses ids no store can hold', async () => {
    const t = await createTestApp();
    const { withdrawConsent } = await import('../../src/consents/withdraw-consent.js');
    await expect(withdrawConsent(t.store, 'user\u0000', t.codeClient.clientId)).rejects.toThrow(TypeError);
    await expect(withdrawConsent(t.store, USER.id, 'x'.repeat(256))).rejects.toThrow(TypeError);
  });
});
