// RFC 9068 JWT access tokens: header, claims, JWKS, local verification, rotation, host keys, stores, options.
import { createPrivateKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import express from 'express';
import request from 'supertest';
import { beforeAll, describe, expect, it } from 'vitest';
import { ISSUER, LEGACY_ISSUER, USER, basic, createTestApp, createTestUserAuth, type TestApp } from '../helpers/app.js';
import { clientCredentialsToken, codeTokens, introspect, revoke } from '../helpers/token-requests.js';
import { callApi, decodeJwt, fetchJwks, forgeJwt, tamperClaims, verifyWithJwks } from '../helpers/jwt.js';
import { createOAuthRouter } from '../../src/router.js';
import { createMemoryStore } from '../../src/stores/memory/index.js';
import type { Store } from '../../src/stores/contract.js';
import { generateSigningKeyRecord } from '../../src/jwt/generate-signing-key.js';
import { PUBLICATION_DELAY_MS } from '../../src/jwt/store-key-ring.js';
import { StoreUnavailableError } from '../../src/stores/store-unavailable-error.js';

const JWT = { accessTokenFormat: 'jwt' } as const;

/** 401 invalid_token with the Bearer challenge, as for an unknown opaque token (RFC 6750 §3.1). */
async function expectInvalidToken(t: TestApp, token: string): Promise<void> {
  const res = await callApi(t.app, token);
  expect(res.status).toBe(401);
  expect(res.body.error).toBe('invalid_token');
  expect(res.headers['www-authenticate']).toMatch(/^Bearer realm="[^"]+", error="invalid_token"/);
}

/** The store's current signing key, to forge tokens that differ from real ones in exactly one respect. */
async function storeSigner(store: Store): Promise<{ key: KeyObject; kid: string }> {
  const records = await store.keys!.listSigningKeys();
  const newest = records.at(-1)!;
  return { key: createPrivateKey(newest.privateKeyPem), kid: newest.kid };
}

describe('RFC 9068 JWT access tokens (store-generated keys)', () => {
  let t: TestApp;
  beforeAll(async () => { t = await createTestApp(JWT); });

  it('the access token is a JWS with header { alg: ES256, typ: at+jwt, kid } of a key in the JWKS (§2.1)', async () => {
    const token = await clientCredentialsToken(t.app, t.credentialsClient);
    const { header } = decodeJwt(token);
    expect(header).toEqual({ alg: 'ES256', typ: 'at+jwt', kid: expect.any(String) });
    const jwks = await fetchJwks(t.app);
    expect(jwks).toHaveLength(1);
    expect(jwks[0]).toEqual({ kty: 'EC', crv: 'P-256', x: expect.any(String), y: expect.any(String), kid: header.kid, alg: 'ES256', use: 'sig' });
    expect(await fetchJwks(t.app, '/legacy')).toEqual(jwks);
  });

  it('a code-flow token carries iss, exp, aud, sub (the user), client_id, iat, jti, scope and grant_id (§2.2)', async () => {
    const before = Math.floor(Date.now() / 1000);
    const { accessToken } = await codeTokens(t.app, t.codeClient);
    const { claims } = decodeJwt(accessToken);
    expect(claims).toEqual({
      iss: ISSUER, exp: expect.any(Number), aud: ISSUER, sub: USER.id, client_id: t.codeClient.clientId,
      iat: expect.any(Number), jti: expect.any(String), scope: 'envelopes:read envelopes:sign', grant_id: expect.any(String),
    });
    expect(claims.iat).toBeGreaterThanOrEqual(before);
    // exp is the expiry rounded up to the second, iat the issue rounded down: the token lives at least expires_in.
    expect((claims.exp as number) - (claims.iat as number)).toBeGreaterThanOrEqual(3600);
    expect((claims.exp as number) - (claims.iat as number)).toBeLessThanOrEqual(3601);
    const other = decodeJwt((await codeTokens(t.app, t.codeClient)).accessToken).claims;
    expect(other.jti).not.toBe(claims.jti);
    expect(other.grant_id).not.toBe(claims.grant_id);
  });

  it('a client_credentials token has sub = client_id and gty client_credentials; scope only when non-empty', async () => {
    const { claims } = decodeJwt(await clientCredentialsToken(t.app, t.credentialsClient, '', 'envelopes:read'));
    expect(claims).toMatchObject({ sub: t.credentialsClient.clientId, client_id: t.credentialsClient.clientId, gty: 'client_credentials', scope: 'envelopes:read' });
  });

  it('a token of the legacy address names that issuer in iss; aud is the main issuer by default', async () => {
    const { claims } = decodeJwt(await clientCredentialsToken(t.app, t.legacyCredentialsClient, '/legacy'));
    expect(claims).toMatchObject({ iss: LEGACY_ISSUER, aud: ISSUER });
  });

  it('the signature verifies independently with node:crypto against the JWKS fetched over HTTP', async () => {
    const jwks = await fetchJwks(t.app);
    expect(verifyWithJwks(await clientCredentialsToken(t.app, t.credentialsClient), jwks)).toBe(true);
    expect(verifyWithJwks((await codeTokens(t.app, t.codeClient)).accessToken, jwks)).toBe(true);
  });

  it('metadata names jwks_uri at both issuers (RFC 8414 §2); without jwt there is neither jwks_uri nor a JWKS', async () => {
    const main = await request(t.app).get('/.well-known/oauth-authorization-server');
    expect(main.body.jwks_uri).toBe(`${ISSUER}/oauth2/jwks`);
    const legacy = await request(t.app).get('/.well-known/oauth-authorization-server/legacy');
    expect(legacy.body.jwks_uri).toBe(`${LEGACY_ISSUER}/oauth2/jwks`);
    const opaque = await createTestApp();
    expect((await request(opaque.app).get('/.well-known/oauth-authorization-server')).body).not.toHaveProperty('jwks_uri');
    expect((await request(opaque.app).get('/oauth2/jwks')).status).toBe(404);
  });

  it('the JWKS is public JSON that is never sniffed as another type (RFC 7517 §5; nosniff, the Fetch standard)', async () => {
    for (const path of ['/oauth2/jwks', '/legacy/oauth2/jwks']) {
      const res = await request(t.app).get(path);
      expect(res.status).toBe(200);
      // As every JSON answer of the router says it, the token endpoint's (SPEC §4.2) and the JWKS's own 405.
      expect(res.headers['content-type']).toBe('application/json;charset=UTF-8');
      expect(res.headers['x-content-type-options']).toBe('nosniff');
    }
  });

  it('the JWKS answers HEAD at both issuers with the GET\'s headers and no body (RFC 9110 §9.3.2)', async () => {
    for (const path of ['/oauth2/jwks', '/legacy/oauth2/jwks']) {
      const [got, head] = [await request(t.app).get(path), await request(t.app).head(path)];
      expect(head.status, path).toBe(200);
      expect(head.text ?? '', path).toBe('');
      expect(head.headers['content-length'], path).toBe(String(Buffer.byteLength(got.text)));
      expect(head.headers['content-type'], path).toBe(got.headers['content-type']);
    }
  });

  it('the JWKS answers every other method at both issuers with 405, Allow: GET, HEAD and a JSON error (RFC 9110 §15.5.6)', async () => {
    for (const path of ['/oauth2/jwks', '/legacy/oauth2/jwks']) {
      for (const method of ['put', 'post', 'delete', 'patch', 'options'] as const) {
        const res = await request(t.app)[method](path);
        expect(res.status, `${method} ${path}`).toBe(405);
        expect(res.headers.allow, `${method} ${path}`).toBe('GET, HEAD');
        expect(res.headers['content-type'], `${method} ${path}`).toBe('application/json;charset=UTF-8');
        expect(res.headers['cache-control'], `${method} ${path}`).toBe('no-store');
        expect(res.headers['content-length'], `${method} ${path}`).toBe(String(Buffer.byteLength(res.text)));
        expect(res.body, `${method} ${path}`).toEqual({ error: 'invalid_request', error_description: 'this endpoint accepts only GET and HEAD' });
      }
    }
  });

  it('the JWKS\'s 503 while the store is down is readable from any origin, as its 200 is: a browser sees the 503, not a CORS error', async () => {
    const down = await createTestApp(JWT);
    const keys = down.store.keys! as unknown as Record<string, unknown>;
    for (const method of Object.keys(keys)) {
      if (typeof keys[method] === 'function') keys[method] = async () => { throw new StoreUnavailableError('store down'); };
    }
    for (const path of ['/oauth2/jwks', '/legacy/oauth2/jwks']) {
      const [ok, refused] = [await request(t.app).get(path).set('Origin', 'https://spa.example'),
        await request(down.app).get(path).set('Origin', 'https://spa.example')];
      expect(ok.status, path).toBe(200);
      expect(refused.status, path).toBe(503);
      expect(refused.body, path).toEqual({ error: 'temporarily_unavailable', error_description: 'the authorization server is temporarily unavailable' });
      expect(refused.headers['content-type'], path).toBe('application/json;charset=UTF-8');
      expect(refused.headers['access-control-allow-origin'], path).toBe(ok.headers['access-control-allow-origin']);
      expect(refused.headers['access-control-allow-origin'], path).toBe('*');
    }
  });

  it('requireBearer accepts a code-flow token: req.auth names the user, client, scope, grant and issuer', async () => {
    const { accessToken } = await codeTokens(t.app, t.codeClient);
    const { claims } = decodeJwt(accessToken);
    const res = await callApi(t.app, accessToken);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      clientId: t.codeClient.clientId, userId: USER.id, scope: ['envelopes:read', 'envelopes:sign'], allAccess: false,
      grantId: claims.grant_id, issuer: ISSUER, expiresAt: new Date((claims.exp as number) * 1000).toISOString(),
    });
  });

  it('requireBearer accepts a client_credentials token with userId null, and enforces scope (403)', async () => {
    const token = await clientCredentialsToken(t.app, t.credentialsClient, '', 'envelopes:read');
    const res = await callApi(t.app, token);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ clientId: t.credentialsClient.clientId, userId: null, scope: ['envelopes:read'] });
    const sign = await request(t.app).get('/api/v1/sign').set('Authorization', `Bearer ${token}`);
    expect(sign.status).toBe(403);
    expect(sign.body.error).toBe('insufficient_scope');
  });

  it('introspection and refresh honour revocation; requireBearer does not ask the store (bounded by exp)', async () => {
    const tokens = await codeTokens(t.app, t.codeClient);
    expect((await introspect(t.app, t.codeClient, { token: tokens.accessToken })).body).toMatchObject({ active: true, sub: USER.id });
    expect((await revoke(t.app, t.codeClient, { token: tokens.refreshToken })).status).toBe(200);
    expect((await introspect(t.app, t.codeClient, { token: tokens.accessToken })).body).toEqual({ active: false });
    expect((await callApi(t.app, tokens.accessToken)).status).toBe(200);
  });

  it('with jwt.checkRevocation, requireBearer refuses a JWT revoked at the revocation endpoint (RFC 7009 §2.1)', async () => {
    const checked = await createTestApp({ ...JWT, jwt: { checkRevocation: true } });
    const tokens = await codeTokens(checked.app, checked.codeClient);
    expect((await callApi(checked.app, tokens.accessToken)).status).toBe(200);
    expect((await revoke(checked.app, checked.codeClient, { token: tokens.accessToken })).status).toBe(200);
    await expectInvalidToken(checked, tokens.accessToken);
  });

  it('with jwt.checkRevocation, a forged JWT is refused on its signature before any store lookup', async () => {
    const store = createMemoryStore();
    let lookups = 0;
    const counting: Store = { ...store, tokens: { ...store.tokens, findAccessToken: (hash) => { lookups += 1; return store.tokens.findAccessToken(hash); } } };
    const checked = await createTestApp({ ...JWT, jwt: { checkRevocation: true } }, counting);
    const real = decodeJwt(await clientCredentialsToken(checked.app, checked.credentialsClient));
    const foreign = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;
    await expectInvalidToken(checked, forgeJwt(real.header, real.claims, foreign));
    expect(lookups).toBe(0);
  });

  it('opaque tokens issued before switching to jwt still pass requireBearer, through the store', async () => {
    const store = createMemoryStore();
    const before = await createTestApp({}, store);
    const opaque = await clientCredentialsToken(before.app, before.credentialsClient);
    expect(opaque).toMatch(/^[0-9a-v]{11}\.[A-Za-z0-9_-]{43}$/); // one dot: never taken for a JWS (three parts)
    const after = await createTestApp(JWT, store);
    expect((await callApi(after.app, opaque)).status).toBe(200);
  });

  describe('refused with 401 invalid_token', () => {
    let claims: Record<string, unknown>;
    beforeAll(async () => {
      claims = decodeJwt(await clientCredentialsToken(t.app, t.credentialsClient)).claims;
    });
    const header = (kid: string, extra: Record<string, unknown> = {}) => ({ alg: 'ES256', typ: 'at+jwt', kid, ...extra });

    it('a forged token with everything right is accepted (so each refusal below is about one thing)', async () => {
      const { key, kid } = await storeSigner(t.store);
      expect((await callApi(t.app, forgeJwt(header(kid), claims, key))).status).toBe(200);
    });

    it('not a token from an instance whose clock is up to a minute ahead (iat and nbf 30 s from now)', async () => {
      const { key, kid } = await storeSigner(t.store);
      const ahead = Math.floor(Date.now() / 1000) + 30;
      expect((await callApi(t.app, forgeJwt(header(kid), { ...claims, iat: ahead, nbf: ahead }, key))).status).toBe(200);
    });

    it('a tampered payload (signature of the original), also after the original was verified and cached', async () => {
      const token = await clientCredentialsToken(t.app, t.credentialsClient);
      expect((await callApi(t.app, token)).status).toBe(200);
      await expectInvalidToken(t, tamperClaims(token, { sub: 'someone-else' }));
      await expectInvalidToken(t, tamperClaims(token, { scope: 'envelopes:read envelopes:sign admin' }));
    });

    it('an unknown kid', async () => {
      const { key } = await storeSigner(t.store);
      await expectInvalidToken(t, forgeJwt(header('no-such-kid'), claims, key));
    });

    it('alg none, and alg HS256 keyed with the public key (algorithm substitution)', async () => {
      const { kid } = await storeSigner(t.store);
      const none = `${Buffer.from(JSON.stringify(header(kid, { alg: 'none' }))).toString('base64url')}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.`;
      await expectInvalidToken(t, none);
      await expectInvalidToken(t, `${none}AAAA`);
      const jwk = (await fetchJwks(t.app))[0]!;
      await expectInvalidToken(t, forgeJwt(header(kid, { alg: 'HS256' }), claims, Buffer.from(JSON.stringify(jwk))));
    });

    it('typ JWT (or none) instead of at+jwt (§4)', async () => {
      const { key, kid } = await storeSigner(t.store);
      await expectInvalidToken(t, forgeJwt(header(kid, { typ: 'JWT' }), claims, key));
      await expectInvalidToken(t, forgeJwt({ alg: 'ES256', kid }, claims, key));
    });

    it('a wrong aud, an iss that is not ours, a future iat, a missing exp', async () => {
      const { key, kid } = await storeSigner(t.store);
      await expectInvalidToken(t, forgeJwt(header(kid), { ...claims, aud: 'https://other-api.example' }, key));
      await expectInvalidToken(t, forgeJwt(header(kid), { ...claims, iss: 'https://evil.example' }, key));
      await expectInvalidToken(t, forgeJwt(header(kid), { ...claims, iat: Math.floor(Date.now() / 1000) + 120 }, key));
      await expectInvalidToken(t, forgeJwt(header(kid), { ...claims, exp: undefined }, key));
    });

    it('a token signed by a foreign key, under our kid or its own', async () => {
      const { kid } = await storeSigner(t.store);
      const foreign = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;
      await expectInvalidToken(t, forgeJwt(header(kid), claims, foreign));
      await expectInvalidToken(t, forgeJwt(header('foreign-kid'), claims, foreign));
    });

    it('an expired token (accessTokenTtl 1, then 2.1 s: an expiry is rounded up to a whole second, so a token lives 1 to 2 s)', async () => {
      const short = await createTestApp({ ...JWT, accessTokenTtl: 1 });
      const token = await clientCredentialsToken(short.app, short.credentialsClient);
      expect((await callApi(short.app, token)).status).toBe(200);
      await new Promise((resolve) => setTimeout(resolve, 2100));
      await expectInvalidToken(short, token);
    });
  });

  describe('rotation (oauth.rotateSigningKey)', () => {
    it('rotation publishes the new key at once and keeps signing with the old one: a resource server holding the JWKS fetched just after verifies every token', async () => {
      const store = createMemoryStore();
      const oauth = createOAuthRouter(store, createTestUserAuth(new Set()), { issuer: ISSUER, ...JWT, session: { secret: 'test-session-secret-0123456789' }, logger: { warn() {}, error() {} } });
      const r = await createTestApp(JWT, store);
      const old = await clientCredentialsToken(r.app, r.credentialsClient);
      const oldKid = decodeJwt(old).header.kid;
      const { kid } = await oauth.rotateSigningKey();
      expect(kid).not.toBe(oldKid);
      const app = express();
      app.use(oauth.router);
      app.get('/api/v1/me', oauth.requireBearer(), (req, res) => { res.json(req.auth); });
      // The rotating instance publishes both at once; the other picks the new key up when it reads the store again.
      expect((await fetchJwks(app)).map((key) => key.kid).sort()).toEqual([oldKid, kid].sort());
      const cachedBeforeRotation = await fetchJwks(r.app);
      const res = await request(app).post('/oauth2/token').set('Authorization', basic(r.credentialsClient)).type('form').send({ grant_type: 'client_credentials' });
      const fresh = res.body.access_token as string;
      // Still the old key: a resource server whose JWK Set predates the rotation (the other instance's, or a cache) verifies it.
      expect(decodeJwt(fresh).header.kid).toBe(oldKid);
      expect(await verifyWithJwks(fresh, cachedBeforeRotation)).toBe(true);
      expect((await callApi(r.app, fresh)).status).toBe(200);
      expect((await request(app).get('/api/v1/me').set('Authorization', `Bearer ${old}`)).status).toBe(200);
    });

    it(`a key published ${PUBLICATION_DELAY_MS / 60_000} minutes (every instance's refresh, the JWKS max-age, a minute of skew) signs; the one before keeps verifying`, async () => {
      const store = createMemoryStore();
      const before = generateSigningKeyRecord(new Date(Date.now() - 2 * PUBLICATION_DELAY_MS));
      const published = generateSigningKeyRecord(new Date(Date.now() - PUBLICATION_DELAY_MS - 1_000));
      const pending = generateSigningKeyRecord(new Date(Date.now() - PUBLICATION_DELAY_MS + 30_000));
      for (const record of [before, published, pending]) await store.keys!.saveSigningKey(record);
      const r = await createTestApp(JWT, store);
      expect(decodeJwt(await clientCredentialsToken(r.app, r.credentialsClient)).header.kid).toBe(published.kid);
      expect((await fetchJwks(r.app)).map((key) => key.kid).sort()).toEqual([before.kid, published.kid, pending.kid].sort());
      const claims = decodeJwt(await clientCredentialsToken(r.app, r.credentialsClient)).claims;
      const header = (k: string) => ({ alg: 'ES256', typ: 'at+jwt', kid: k });
      expect((await callApi(r.app, forgeJwt(header(before.kid), claims, createPrivateKey(before.privateKeyPem)))).status).toBe(200);
    });

    it("a store's first key signs at once, though it was created just now", async () => {
      const r = await createTestApp(JWT, createMemoryStore());
      const token = await clientCredentialsToken(r.app, r.credentialsClient);
      expect((await fetchJwks(r.app)).map((key) => key.kid)).toEqual([decodeJwt(token).header.kid]);
    });

    it('a key superseded longer than accessTokenTtl ago is retired: unpublished, its tokens refused', async () => {
      const store = createMemoryStore();
      const day = 24 * 3600 * 1000;
      const retired = generateSigningKeyRecord(new Date(Date.now() - 3 * day));
      const recent = generateSigningKeyRecord(new Date(Date.now() - 2 * day));
      const current = generateSigningKeyRecord(new Date(Date.now() - 60_000));
      for (const record of [retired, recent, current]) await store.keys!.saveSigningKey(record);
      const r = await createTestApp({ ...JWT, accessTokenTtl: 24 * 3600 }, store);
      expect((await fetchJwks(r.app)).map((key) => key.kid).sort()).toEqual([recent.kid, current.kid].sort());
      const claims = decodeJwt(await clientCredentialsToken(r.app, r.credentialsClient)).claims;
      const header = (kid: string) => ({ alg: 'ES256', typ: 'at+jwt', kid });
      expect((await callApi(r.app, forgeJwt(header(recent.kid), claims, createPrivateKey(recent.privateKeyPem)))).status).toBe(200);
      await expectInvalidToken(r, forgeJwt(header(retired.kid), claims, createPrivateKey(retired.privateKeyPem)));
    });
  });
});
