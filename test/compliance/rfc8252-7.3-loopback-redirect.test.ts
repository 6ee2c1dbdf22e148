// RFC 8252 §7.3 (and RFC 9700 §2.1's exception): a loopback IP redirect URI matches with any port; nothing else loosens.
import request from 'supertest';
import { beforeAll, describe, expect, it } from 'vitest';
import { basic, createTestApp, type TestApp, type TestClient } from '../helpers/app.js';
import { authorize, authorizeQuery } from '../helpers/browser-flow.js';
import { registerClient } from '../../src/clients/register-client.js';

let t: TestApp;
let native: TestClient;

beforeAll(async () => {
  t = await createTestApp({ loginRateLimit: false });
  const { client, clientSecret } = await registerClient(t.store, {
    name: 'Desktop signer', flow: 'authorization_code',
    redirectUris: ['http://127.0.0.1:8080/cb', 'http://[::1]/cb?app=desk', 'http://localhost:8080/cb', 'https://127.0.0.1:8443/tls'],
  });
  native = { clientId: client.clientId, clientSecret };
});

function exchange(code: string, redirectUri: string) {
  return request(t.app).post('/oauth2/token').set('Authorization', basic(native)).type('form')
    .send({ grant_type: 'authorization_code', code, redirect_uri: redirectUri });
}

describe('RFC 8252 §7.3: loopback IP redirect URIs', () => {
  it.each([
    ['127.0.0.1 registered with a port, requested with another', 'http://127.0.0.1:51234/cb'],
    ['127.0.0.1 requested with the registered port', 'http://127.0.0.1:8080/cb'],
    ['[::1] registered without a port, requested with one', 'http://[::1]:65535/cb?app=desk'],
    ['[::1] requested without a port, as registered', 'http://[::1]/cb?app=desk'],
  ])('%s: the code goes to the port asked for, and the exchange must name that same URI', async (_label, redirectUri) => {
    const callback = await authorize(t.app, native, { query: { redirect_uri: redirectUri } });
    expect(`${callback.origin}${callback.pathname}`).toBe(redirectUri.split('?')[0]);
    const code = callback.searchParams.get('code')!;
    expect(code).toBeTruthy();
    // RFC 6749 §4.1.3: "identical" to the authorization request's; another port is another URI there.
    if (redirectUri.includes(':51234')) expect((await exchange(code, 'http://127.0.0.1:8080/cb')).body.error).toBe('invalid_grant');
    else expect((await exchange(code, redirectUri)).status).toBe(200);
  });

  it('the exchange naming the port of the authorization request is served', async () => {
    const callback = await authorize(t.app, native, { query: { redirect_uri: 'http://127.0.0.1:40001/cb' } });
    expect((await exchange(callback.searchParams.get('code')!, 'http://127.0.0.1:40001/cb')).status).toBe(200);
  });

  it.each([
    ['another path', 'http://127.0.0.1:9000/cb2'],
    ['a trailing slash', 'http://127.0.0.1:9000/cb/'],
    ['another query', 'http://[::1]:9000/cb?app=other'],
    ['another loopback address', 'http://127.0.0.2:8080/cb'],
    ['https', 'https://127.0.0.1:8080/cb'],
    ['a registered https loopback URI on another port (§7.3 frees the port of http loopback URIs only)', 'https://127.0.0.1:9443/tls'],
    ['localhost on another port (names are matched exactly, RFC 8252 §8.3)', 'http://localhost:9999/cb'],
    ['userinfo after the port', 'http://127.0.0.1:80@evil.example/cb'],
    ['a host that only starts like the address', 'http://127.0.0.1.evil.example:8080/cb'],
    ['port 0', 'http://127.0.0.1:0/cb'],
    ['a port past 65535', 'http://127.0.0.1:65536/cb'],
    ['a port with a leading zero', 'http://127.0.0.1:08080/cb'],
    ['an empty port', 'http://127.0.0.1:/cb'],
  ])('%s is not a registered redirect URI: an error page, no redirect', async (_label, redirectUri) => {
    const res = await request(t.app).get(`/oauth2/authorize?${authorizeQuery(native, { redirect_uri: redirectUri })}`);
    expect(res.status).toBe(400);
    expect(res.headers.location).toBeUndefined();
    expect(res.text).toContain('redirect_uri is not registered');
  });
});
