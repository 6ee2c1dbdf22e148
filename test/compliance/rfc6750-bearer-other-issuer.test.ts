// README "Embedding in your app": two routers (tenants) on one store: each admits only its own issuers' tokens (requireBearer, introspection).
import express from 'express';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerClient } from '../../src/clients/register-client.js';
import type { OAuthRouterOptions } from '../../src/options.js';
import { builtInStores, type OpenedStore } from '../helpers/built-in-stores.js';
import { basic, createTestRouter, type TestClient } from '../helpers/app.js';

const TENANTS = ['a', 'b'] as const;
type Tenant = typeof TENANTS[number];

/** One host app, two routers on one store, at `http://auth.test/t/a` and `/t/b`, each guarding `/api/<tenant>`. */
function twoTenants(opened: OpenedStore, options: Partial<OAuthRouterOptions>): express.Express {
  const app = express();
  for (const tenant of TENANTS) {
    const oauth = createTestRouter(opened.store, {
      issuer: `http://auth.test/t/${tenant}`,
      session: { secret: 'test-session-secret-0123456789', cookieName: `${tenant}.sid` },
      ...options,
    });
    app.use(oauth.router);
    app.get(`/api/${tenant}`, oauth.requireBearer(), (req, res) => { res.json(req.auth); });
  }
  return app;
}

async function tokenAt(app: express.Express, client: TestClient, tenant: Tenant): Promise<string> {
  const res = await request(app).post(`/t/${tenant}/oauth2/token`).set('Authorization', basic(client)).type('form')
    .send({ grant_type: 'client_credentials' });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.access_token as string;
}

const FORMATS: ReadonlyArray<readonly [string, Partial<OAuthRouterOptions>]> = [
  ['opaque tokens', {}],
  ['JWT access tokens under jwt.checkRevocation', { accessTokenFormat: 'jwt', jwt: { checkRevocation: true } }],
  ['JWT access tokens checked by signature', { accessTokenFormat: 'jwt' }],
];

describe.each(builtInStores('bearer_other_issuer'))('RFC 6750 §3.1: a router refuses another router\'s tokens on one %s store', (_label, available, open) => {
  let opened: OpenedStore;
  let client: TestClient;
  beforeAll(async () => {
    if (!available) return;
    opened = await open();
    const { client: registered, clientSecret } = await registerClient(opened.store, { name: 'Nightly Sync', flow: 'client_credentials', redirectUris: [], allowedScopes: [] });
    client = { clientId: registered.clientId, clientSecret };
  });
  afterAll(async () => { if (available) await opened.dispose(); });

  it.skipIf(!available).each(FORMATS)('%s: 401 invalid_token at the other tenant\'s API, 200 at its own', async (_format, options) => {
    const app = twoTenants(opened, options);
    for (const [issuedAt, other] of [['a', 'b'], ['b', 'a']] as const) {
      const token = await tokenAt(app, client, issuedAt);
      const own = await request(app).get(`/api/${issuedAt}`).set('Authorization', `Bearer ${token}`);
      expect(own.status).toBe(200);
      expect(own.body.issuer).toBe(`http://auth.test/t/${issuedAt}`);
      // Twice: the second answer may come from the other router's bearer cache, which must not hold it either.
      for (let round = 0; round < 2; round += 1) {
        const foreign = await request(app).get(`/api/${other}`).set('Authorization', `Bearer ${token}`);
        expect(foreign.status, `${issuedAt}'s token at ${other}, round ${round}`).toBe(401);
        expect(foreign.body.error).toBe('invalid_token');
        expect(foreign.headers['www-authenticate']).toContain(`realm="http://auth.test/t/${other}"`);
      }
    }
  });

  it.skipIf(!available)('RFC 7662 §2.2: the other tenant\'s introspection answers {"active":false}, its own active with its iss', async () => {
    const app = twoTenants(opened, {});
    const token = await tokenAt(app, client, 'a');
    const at = (tenant: Tenant) => request(app).post(`/t/${tenant}/oauth2/introspect`).set('Authorization', basic(client)).type('form').send({ token });
    const own = await at('a');
    expect(own.body).toMatchObject({ active: true, iss: 'http://auth.test/t/a' });
    const foreign = await at('b');
    expect(foreign.status).toBe(200);
    expect(foreign.body).toEqual({ active: false });
  });
});
