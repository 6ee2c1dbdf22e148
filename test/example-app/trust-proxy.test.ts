// The example app's TRUST_PROXY: parsed into Express's `trust proxy`, which decides the source the limits count.
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { registerClient } from 'express-oauth-router';
import { createMemoryStore } from 'express-oauth-router/stores/memory';
import { createApp } from '../../example-app/app.js';
import { createDemoUserAuth } from '../../example-app/users.js';
import { parseTrustProxy, trustProxyWarning } from '../../example-app/trust-proxy.js';

describe('TRUST_PROXY', () => {
  it('is unset by default, a hop count when a whole number, a boolean for true or false, else an address list', () => {
    expect(parseTrustProxy(undefined)).toBeUndefined();
    expect(parseTrustProxy('1')).toBe(1);
    expect(parseTrustProxy('true')).toBe(true);
    expect(parseTrustProxy('false')).toBe(false);
    expect(parseTrustProxy('10.0.0.0/8, loopback')).toBe('10.0.0.0/8, loopback');
    expect(() => parseTrustProxy('1.5')).toThrow(TypeError);
    expect(() => parseTrustProxy('-1')).toThrow(TypeError);
  });

  it('a bad address list stops the app at start-up with a TypeError', async () => {
    const userAuth = await createDemoUserAuth({ username: 'demo', password: 'correct horse battery' });
    expect(() => createApp({ store: createMemoryStore(), userAuth, authUrl: 'http://localhost:3000', trustProxy: 'not-an-address' })).toThrow(TypeError);
  });

  for (const trustProxy of [1, undefined]) {
    it(`with trustProxy ${String(trustProxy)}, a stranger's failures from another X-Forwarded-For ${trustProxy ? 'do not' : 'do'} reach the client`, async () => {
      const store = createMemoryStore();
      const userAuth = await createDemoUserAuth({ username: 'demo', password: 'correct horse battery' });
      const { app } = createApp({
        store, userAuth, authUrl: 'http://localhost:3000', sessionSecret: 'a-session-secret-of-32-characters',
        ...(trustProxy !== undefined ? { trustProxy } : {}),
      });
      const { client, clientSecret } = await registerClient(store, { name: 'Nightly Sync', flow: 'client_credentials' });
      const token = (secret: string, from: string) => request(app).post('/oauth2/token').set('X-Forwarded-For', from)
        .set('Authorization', `Basic ${Buffer.from(`${client.clientId}:${secret}`).toString('base64')}`).type('form')
        .send({ grant_type: 'client_credentials' });
      for (let i = 0; i < 20; i += 1) expect((await token('wrong', '203.0.113.7')).status).toBe(401);
      expect((await token(clientSecret, '198.51.100.20')).status).toBe(trustProxy ? 200 : 429);
      await store.close?.();
    });
  }
});

describe('TRUST_PROXY=true at start-up', () => {
  it('is warned about (every client could choose its own address), and no other setting is', () => {
    expect(trustProxyWarning(parseTrustProxy('true'))).toMatch(/^TRUST_PROXY=true trusts every X-Forwarded-For/);
    for (const value of [undefined, 'false', '1', 'loopback', '10.0.0.0/8, loopback']) {
      expect(trustProxyWarning(parseTrustProxy(value)), String(value)).toBeNull();
    }
  });
});
