// RFC 9068 / RFC 7519 hostile JWT access tokens, signed with our real key: NumericDates no Date can hold, and
// the high-S twin of a valid ES256 signature. Both are refused; our own tokens are always low-S.
import { createPrivateKey, type KeyObject } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import request from 'supertest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { clientCredentialsToken } from '../helpers/token-requests.js';
import { callApi, decodeJwt, forgeJwt, isLowS, otherS, tamperClaims } from '../helpers/jwt.js';

describe('RFC 9068 §4 / RFC 7519 §2: hostile JWT access tokens are 401 invalid_token', () => {
  let t: TestApp;
  let key: KeyObject;
  let kid: string;
  let claims: Record<string, unknown>;
  const header = () => ({ alg: 'ES256', typ: 'at+jwt', kid });

  beforeAll(async () => {
    t = await createTestApp({ accessTokenFormat: 'jwt' });
    claims = decodeJwt(await clientCredentialsToken(t.app, t.credentialsClient)).claims;
    const newest = (await t.store.keys!.listSigningKeys()).at(-1)!;
    key = createPrivateKey(newest.privateKeyPem);
    kid = newest.kid;
  });

  async function expectRefused(token: string): Promise<void> {
    const res = await callApi(t.app, token);
    expect(res.status).toBe(401);
    expect(res.body.error).toBe('invalid_token');
  }

  it('the same claims, correctly signed, are accepted and expiresAt is a valid Date (so each refusal is about one claim)', async () => {
    const res = await callApi(t.app, forgeJwt(header(), claims, key));
    expect(res.status).toBe(200);
    expect(Number.isNaN(Date.parse(res.body.expiresAt))).toBe(false);
  });

  it('typ at+jwt or application/at+jwt, in any case, and an aud array containing the audience are accepted (RFC 9068 §4, RFC 2045 §5.1)', async () => {
    for (const typ of ['application/at+jwt', 'AT+JWT', 'Application/At+Jwt']) {
      expect((await callApi(t.app, forgeJwt({ ...header(), typ }, claims, key))).status, typ).toBe(200);
    }
    expect((await callApi(t.app, forgeJwt(header(), { ...claims, aud: ['https://other.example', claims.aud] }, key))).status).toBe(200);
    await expectRefused(forgeJwt({ ...header(), typ: 'JWT' }, claims, key));
    await expectRefused(forgeJwt(header(), { ...claims, aud: ['https://other.example'] }, key));
  });

  it('exp beyond the range of a Date (1e20), beyond the year 9999, fractional, negative or a string', async () => {
    for (const exp of [1e20, 253_402_300_800, Number.MAX_SAFE_INTEGER, (claims.exp as number) + 0.5, -1, String(claims.exp)]) {
      await expectRefused(forgeJwt(header(), { ...claims, exp }, key));
    }
  });

  it('iat or nbf that are no NumericDate, and an iat not before exp', async () => {
    for (const iat of [1e20, -5, 1.5, 'yesterday', null]) await expectRefused(forgeJwt(header(), { ...claims, iat }, key));
    for (const nbf of [-1e20, 0.25, 'now']) await expectRefused(forgeJwt(header(), { ...claims, nbf }, key));
    await expectRefused(forgeJwt(header(), { ...claims, iat: claims.exp }, key));
  });

  it('a token without jti (REQUIRED, RFC 9068 §2.2), or a client_credentials token whose sub is not its client', async () => {
    const { jti: _jti, ...withoutJti } = claims;
    await expectRefused(forgeJwt(header(), withoutJti, key));
    await expectRefused(forgeJwt(header(), { ...claims, jti: 7 }, key));
    expect(claims.gty).toBe('client_credentials');
    await expectRefused(forgeJwt(header(), { ...claims, sub: 'user-alice' }, key));
  });

  it('a crit header (RFC 7515 §4.1.11: extensions this verifier does not know), or an alg other than its key\'s (RFC 8725 §3.1)', async () => {
    await expectRefused(forgeJwt({ ...header(), crit: ['exp'] }, claims, key));
    await expectRefused(forgeJwt({ ...header(), crit: [] }, claims, key));
    // Signed with the ES256 key all the same: only the header's alg differs from the key's.
    for (const alg of ['ES384', 'RS256', 'EdDSA']) await expectRefused(forgeJwt({ ...header(), alg }, claims, key));
  });

  it('a token whose exp is this very second (RFC 7519 §4.1.4: "on or after" exp it MUST NOT be accepted)', async () => {
    const exp = Math.floor(Date.now() / 1000);
    await expectRefused(forgeJwt(header(), { ...claims, exp, iat: exp - 60 }, key));
  });

  it('a gty other than client_credentials, a scope claim that is not a string, and an empty scope claim that grants nothing', async () => {
    await expectRefused(forgeJwt(header(), { ...claims, gty: 'password' }, key));
    for (const scope of [['envelopes:read'], 7, null]) await expectRefused(forgeJwt(header(), { ...claims, scope }, key));
    // A present claim, even empty, limits the token: it is no all-access token.
    const empty = forgeJwt(header(), { ...claims, scope: '' }, key);
    const me = await callApi(t.app, empty);
    expect(me.status).toBe(200);
    expect(me.body).toMatchObject({ scope: [], allAccess: false });
    const sign = await request(t.app).get('/api/v1/sign').set('Authorization', `Bearer ${empty}`);
    expect(sign.status).toBe(403);
    expect(sign.body.error).toBe('insufficient_scope');
  });

  it('a token expires at its exp to the second: the issued exp is the record\'s expiry, which introspection states (RFC 7519 §4.1.4)', async () => {
    const token = await clientCredentialsToken(t.app, t.credentialsClient);
    const { exp } = decodeJwt(token).claims as { exp: number };
    const me = await callApi(t.app, token);
    expect(me.status).toBe(200);
    expect(Date.parse(me.body.expiresAt as string), 'req.auth.expiresAt is exp, not a later millisecond').toBe(exp * 1000);
    const record = await t.store.tokens.findAccessToken((await import('../../src/crypto/hash-token.js')).hashToken(token));
    expect(record!.expiresAt.getTime()).toBe(exp * 1000);
  });

  it('the high-S twin of a valid ES256 signature (malleability: it verifies under plain ECDSA)', async () => {
    const token = forgeJwt(header(), claims, key);
    const [head, payload, signature] = token.split('.') as [string, string, string];
    const twin = `${head}.${payload}.${otherS(Buffer.from(signature, 'base64url')).toString('base64url')}`;
    expect((await callApi(t.app, token)).status).toBe(200);
    await expectRefused(twin);
  });

  it('another text of the same bytes (a segment\'s last character with its unused bits set, RFC 4648 §3.5): one token, one text', async () => {
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    const token = await clientCredentialsToken(t.app, t.credentialsClient);
    expect((await callApi(t.app, token)).status).toBe(200);
    const segments = token.split('.');
    let twins = 0;
    for (const [n, segment] of segments.entries()) {
      const unused = { 0: 0, 2: 0b1111, 3: 0b11 }[segment.length % 4 as 0 | 2 | 3];
      const last = alphabet.indexOf(segment.at(-1)!);
      for (let bits = 1; bits <= unused; bits += 1) {
        const twin = `${segment.slice(0, -1)}${alphabet[last | bits]}`;
        expect(Buffer.from(twin, 'base64url').equals(Buffer.from(segment, 'base64url'))).toBe(true);
        await expectRefused(segments.map((s, i) => (i === n ? twin : s)).join('.'));
        twins += 1;
      }
    }
    // An ES256 signature is 86 characters: 15 twins at least.
    expect(twins).toBeGreaterThanOrEqual(15);
    expect((await callApi(t.app, token)).status).toBe(200);
  });

  it('every token the server signs is low-S (OpenSSL picks either form at random; about half would be high-S)', async () => {
    for (let i = 0; i < 40; i += 1) {
      const token = await clientCredentialsToken(t.app, t.credentialsClient);
      expect(isLowS(decodeJwt(token).signature)).toBe(true);
      expect((await callApi(t.app, token)).status).toBe(200);
    }
  });

  it("a remembered token's signature under other claims is refused: the verifier's memory matches whole tokens", async () => {
    // The memory is found by the signature segment; a token sharing only that segment must not be served from it.
    const token = await clientCredentialsToken(t.app, t.credentialsClient);
    expect((await callApi(t.app, token)).status).toBe(200);
    await expectRefused(tamperClaims(token, { client_id: 'someone-else' }));
    expect((await callApi(t.app, token)).status).toBe(200);
  });

  it('a remembered token is judged by the Bearer syntax like any other when the header is not plain "Bearer <token>"', async () => {
    const token = await clientCredentialsToken(t.app, t.credentialsClient);
    expect((await callApi(t.app, token)).status).toBe(200);
    // RFC 6750 §2.1: the scheme is case-insensitive and 1*SP separates it from the token.
    for (const authorization of [`bearer ${token}`, `BEARER  ${token}`]) {
      expect((await request(t.app).get('/api/v1/me').set('Authorization', authorization)).status).toBe(200);
    }
    // More after the token is another credential, never the remembered one: a b64token that is no token of ours
    // (401 invalid_token), or no b64token at all (400 invalid_request).
    const [dotted, comma] = await Promise.all([`Bearer ${token}.`, `Bearer ${token},x`]
      .map((authorization) => request(t.app).get('/api/v1/me').set('Authorization', authorization)));
    expect([dotted!.status, dotted!.body.error]).toEqual([401, 'invalid_token']);
    expect([comma!.status, comma!.body.error]).toEqual([400, 'invalid_request']);
  });
});
