// The router's JSON answers are its own bytes whatever Express settings the host app sets: `json spaces` and `json
// replacer` (which res.json applies), `etag`, `x-powered-by`, `query parser`, `strict routing`, `case sensitive routing`.
import express from 'express';
import request from 'supertest';
import { beforeAll, describe, expect, it } from 'vitest';
import { basic, createTestApp, type TestApp } from '../helpers/app.js';
import { authorize } from '../helpers/browser-flow.js';
import { redeemCode } from '../helpers/spec-requests.js';
import { createMemoryStore } from '../../src/stores/memory/index.js';
import { StoreUnavailableError } from '../../src/stores/store-unavailable-error.js';

/** Settings a host may give its app; the replacer drops `error` and `keys` and renames nothing else. */
const SETTINGS: ReadonlyArray<readonly [string, unknown]> = [
  ['json spaces', 2],
  ['json replacer', (key: string, value: unknown) => (key === 'error' || key === 'keys' ? undefined : value)],
  ['etag', 'strong'],
  ['x-powered-by', true],
  ['query parser', 'extended'],
  ['strict routing', true],
  ['case sensitive routing', true],
];

/** The test app, its router mounted in an outer app with `settings` (what the host's own `express()` carries). */
async function hostWith(settings: ReadonlyArray<readonly [string, unknown]>, jwt = false): Promise<{ t: TestApp; app: express.Express }> {
  const t = await createTestApp(jwt ? { accessTokenFormat: 'jwt' } : {}, createMemoryStore());
  const app = express();
  for (const [name, value] of settings) app.set(name, value);
  app.use(t.app);
  return { t, app };
}

describe.each(SETTINGS)('a host app with %s set', (name, value) => {
  let plain: { t: TestApp; app: express.Express };
  let host: { t: TestApp; app: express.Express };

  beforeAll(async () => {
    plain = await hostWith([], true);
    host = await hostWith([[name, value]], true);
  });

  it('token endpoint: an error answer has the same status, headers and bytes as in a plain app', async () => {
    const send = (app: express.Express) => request(app).post('/oauth2/token').type('form').send('grant_type=client_credentials');
    const [a, b] = [await send(plain.app), await send(host.app)];
    expect(b.status).toBe(a.status);
    expect(b.text).toBe(a.text);
    expect(b.headers['etag']).toBeUndefined();
    expect(b.headers['x-powered-by']).toBeUndefined();
    expect(b.headers['content-type']).toBe('application/json;charset=UTF-8');
  });

  it('the code flow gets a token whose JSON has every field, compact', async () => {
    const callback = await authorize(host.app, host.t.codeClient);
    const res = await redeemCode(host.app, '', host.t.codeClient, callback.searchParams.get('code')!);
    expect(res.status).toBe(200);
    expect(Object.keys(res.body)).toEqual(expect.arrayContaining(['access_token', 'refresh_token', 'expires_in', 'token_type']));
    expect(res.text).not.toContain('\n');
  });

  it('introspection and the metadata are compact JSON with every field', async () => {
    const token = await request(host.app).post('/oauth2/token').set('Authorization', basic(host.t.credentialsClient)).type('form')
      .send('grant_type=client_credentials');
    const introspection = await request(host.app).post('/oauth2/introspect').set('Authorization', basic(host.t.credentialsClient))
      .type('form').send({ token: token.body.access_token });
    expect(introspection.body.active).toBe(true);
    expect(introspection.text).not.toContain('\n');
    const metadata = await request(host.app).get('/.well-known/oauth-authorization-server');
    expect(metadata.body.token_endpoint).toBe('http://auth.test/oauth2/token');
    expect(metadata.text).not.toContain('\n');
  });

  it('JWKS: the key set, and its 503 while the store is down, are the router\'s own JSON', async () => {
    const jwks = await request(host.app).get('/oauth2/jwks');
    expect(jwks.body.keys).toHaveLength(1);
    expect(jwks.text).not.toContain('\n');
    const down = await hostWith([[name, value]], true);
    const keys = down.t.store.keys! as unknown as Record<string, unknown>;
    for (const method of Object.keys(keys)) {
      if (typeof keys[method] === 'function') keys[method] = async () => { throw new StoreUnavailableError('store down'); };
    }
    const refused = await request(down.app).get('/oauth2/jwks');
    expect(refused.status).toBe(503);
    expect(refused.text).toBe('{"error":"temporarily_unavailable"}');
    expect(refused.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(refused.headers['cache-control']).toBe('no-store');
    expect(refused.headers['etag']).toBeUndefined();
  });
});
