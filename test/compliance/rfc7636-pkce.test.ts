// RFC 7636 (PKCE) as DESIGN §5 narrows it: S256 only, optional by default, required by option or per integration.
import { describe, it, expect, beforeEach } from 'vitest';
import request from 'supertest';
import { createTestApp, ISSUER, REDIRECT_URI, type TestApp, type TestClient } from '../helpers/app.js';
import { authorizeQuery, obtainCode } from '../helpers/browser-flow.js';
import { createPkcePair, expectRedirectTo, redeemCode } from '../helpers/spec-requests.js';
import { registerClient } from '../../src/clients/register-client.js';

let t: TestApp;
beforeEach(async () => {
  t = await createTestApp();
});

/** Obtains a code for an authorization request carrying `challenge` with method S256. */
function codeWithChallenge(challenge: string, app: TestApp = t, client: TestClient = app.codeClient): Promise<string> {
  return obtainCode(app.app, client, { query: { code_challenge: challenge, code_challenge_method: 'S256' } });
}

/** Asserts that the authorization request was redirected with `error` and the state. */
async function expectAuthorizeError(app: TestApp, client: TestClient, query: Record<string, string | undefined>, error: string): Promise<URL> {
  const res = await request(app.app).get(`/oauth2/authorize?${authorizeQuery(client, query)}`);
  const callback = expectRedirectTo(res);
  expect(callback.searchParams.get('error')).toBe(error);
  expect(callback.searchParams.get('state')).toBe('xyz-123');
  expect(callback.searchParams.get('iss')).toBe(ISSUER);
  expect(callback.searchParams.has('code')).toBe(false);
  return callback;
}

function expectInvalidGrant(res: request.Response): void {
  expect(res.status).toBe(400);
  expect(res.body.error).toBe('invalid_grant');
  expect(res.body.access_token).toBeUndefined();
}

describe('RFC 7636 §4.6: the server verifies code_verifier against code_challenge', () => {
  // "If the "code_challenge_method" from Section 4.3 was "S256", the received "code_verifier" is hashed by
  // SHA-256, base64url-encoded, and then compared to the "code_challenge", i.e.:
  // BASE64URL-ENCODE(SHA256(ASCII(code_verifier))) == code_challenge"
  it('issues tokens for an S256 round trip with the right verifier', async () => {
    const { verifier, challenge } = createPkcePair();
    const code = await codeWithChallenge(challenge);
    const res = await redeemCode(t.app, '', t.codeClient, code, { code_verifier: verifier });
    expect(res.status).toBe(200);
    expect(typeof res.body.access_token).toBe('string');
    expect(typeof res.body.refresh_token).toBe('string');
  });

  it.each([
    ['the shortest (43 characters)', 'a'.repeat(43)],
    ['the longest (128 characters)', `${'Az09-._~'.repeat(16)}`],
  ])('accepts %s verifier of the unreserved characters', async (_label, verifier) => {
    const { challenge } = createPkcePair(verifier);
    const code = await codeWithChallenge(challenge);
    expect((await redeemCode(t.app, '', t.codeClient, code, { code_verifier: verifier })).status).toBe(200);
  });

  it('answers a wrong verifier with invalid_grant and uses the code up: a retry with the right verifier fails too', async () => {
    // "If the values are not equal, an error response indicating "invalid_grant" as described in Section 5.2
    // of [RFC6749] MUST be returned."
    const { verifier, challenge } = createPkcePair();
    const code = await codeWithChallenge(challenge);
    expectInvalidGrant(await redeemCode(t.app, '', t.codeClient, code, { code_verifier: createPkcePair().verifier }));
    expectInvalidGrant(await redeemCode(t.app, '', t.codeClient, code, { code_verifier: verifier }));
  });

  it('answers a missing verifier with invalid_grant when the request carried a challenge, and uses the code up', async () => {
    const { verifier, challenge } = createPkcePair();
    const code = await codeWithChallenge(challenge);
    expectInvalidGrant(await redeemCode(t.app, '', t.codeClient, code));
    expectInvalidGrant(await redeemCode(t.app, '', t.codeClient, code, { code_verifier: verifier }));
  });

  it('answers a verifier sent for a code issued without a challenge with invalid_grant (PKCE downgrade)', async () => {
    const code = await obtainCode(t.app, t.codeClient);
    expectInvalidGrant(await redeemCode(t.app, '', t.codeClient, code, { code_verifier: createPkcePair().verifier }));
  });

  it.each([
    ['too short (42 characters)', 'a'.repeat(42)],
    ['too long (129 characters)', 'a'.repeat(129)],
    ['with a character outside the unreserved set', `${'a'.repeat(42)}+`],
  ])('answers a verifier %s with invalid_request, before the code is used: a retry with the right one succeeds', async (_label, verifier) => {
    // §4.1: code-verifier = 43*128unreserved. The challenge here is the malformed verifier's own S256, so the
    // values are equal and §4.6's invalid_grant ("If the values are not equal") does not apply: the request
    // "is otherwise malformed", which RFC 6749 §5.2 answers invalid_request (as oidc-provider and
    // @node-oauth/oauth2-server do). Nothing was compared, so the code is not spent on it.
    const { challenge } = createPkcePair(verifier);
    const code = await codeWithChallenge(challenge);
    const res = await redeemCode(t.app, '', t.codeClient, code, { code_verifier: verifier });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('invalid_request');
    expect(res.body.error_description).toMatch(/code_verifier/);
    const { verifier: right, challenge: other } = createPkcePair();
    const second = await codeWithChallenge(other);
    expect((await redeemCode(t.app, '', t.codeClient, second, { code_verifier: `${right.slice(0, 42)}+` })).body.error).toBe('invalid_request');
    expect((await redeemCode(t.app, '', t.codeClient, second, { code_verifier: right })).status).toBe(200);
  });

  it('answers the challenge itself sent as the verifier with invalid_grant', async () => {
    const { challenge } = createPkcePair();
    const code = await codeWithChallenge(challenge);
    expectInvalidGrant(await redeemCode(t.app, '', t.codeClient, code, { code_verifier: challenge }));
  });

  it('still issues tokens without any PKCE parameter when PKCE is not required (the default)', async () => {
    const code = await obtainCode(t.app, t.codeClient);
    expect((await redeemCode(t.app, '', t.codeClient, code)).status).toBe(200);
  });
});

describe('RFC 7636 §4.3/§4.4: the authorization request\'s code_challenge (errors are redirected)', () => {
  it('redirects error=invalid_request for code_challenge_method=plain (RFC 9700 §2.1.1: S256 only)', async () => {
    const { challenge } = createPkcePair();
    const callback = await expectAuthorizeError(t, t.codeClient, { code_challenge: challenge, code_challenge_method: 'plain' }, 'invalid_request');
    expect(callback.searchParams.get('error_description')).toMatch(/transform algorithm not supported/);
  });

  it('redirects error=invalid_request for a challenge without a method ("defaults to plain if not present"), which is refused', async () => {
    const { challenge } = createPkcePair();
    await expectAuthorizeError(t, t.codeClient, { code_challenge: challenge }, 'invalid_request');
  });

  it('redirects error=invalid_request for a lower-case method s256 (method names are case-sensitive)', async () => {
    const { challenge } = createPkcePair();
    await expectAuthorizeError(t, t.codeClient, { code_challenge: challenge, code_challenge_method: 's256' }, 'invalid_request');
  });

  it('redirects error=invalid_request for an unknown method', async () => {
    const { challenge } = createPkcePair();
    await expectAuthorizeError(t, t.codeClient, { code_challenge: challenge, code_challenge_method: 'S512' }, 'invalid_request');
  });

  it.each([
    ['too short (42 characters)', createPkcePair().challenge.slice(0, 42)],
    ['too long (44 characters)', `${createPkcePair().challenge}A`],
    ['in standard base64 with padding', Buffer.alloc(32, 0xfb).toString('base64')],
    ['with a character outside base64url', `${createPkcePair().challenge.slice(0, 42)}.`],
    // RFC 4648 §3.5: the last of 43 letters carries 4 bits of the digest and 2 zero bits; 'B' sets one of those.
    ['whose last letter sets bits past the 256 of a SHA-256 (no verifier can match it)', `${createPkcePair().challenge.slice(0, 42)}B`],
  ])('redirects error=invalid_request for a malformed S256 challenge %s', async (_label, challenge) => {
    await expectAuthorizeError(t, t.codeClient, { code_challenge: challenge, code_challenge_method: 'S256' }, 'invalid_request');
  });

  it('redirects error=invalid_request for a code_challenge_method without a code_challenge', async () => {
    await expectAuthorizeError(t, t.codeClient, { code_challenge_method: 'S256' }, 'invalid_request');
  });

  it('redirects error=invalid_request for a repeated code_challenge', async () => {
    const { challenge } = createPkcePair();
    const query = `${authorizeQuery(t.codeClient, { code_challenge: challenge, code_challenge_method: 'S256' })}&code_challenge=${createPkcePair().challenge}`;
    const callback = expectRedirectTo(await request(t.app).get(`/oauth2/authorize?${query}`));
    expect(callback.searchParams.get('error')).toBe('invalid_request');
  });
});

describe('RFC 7636 §4.4.1: PKCE can be required ("code challenge required")', () => {
  // "If the server requires Proof Key for Code Exchange (PKCE) by OAuth public clients and the client does not
  // send the "code_challenge" in the request, the authorization endpoint MUST return the authorization error
  // response with the "error" value set to "invalid_request". The "error_description" or the response of
  // "error_uri" SHOULD explain the nature of error, e.g., code challenge required."
  it('redirects error=invalid_request "code challenge required" when requirePkce: true and the challenge is missing', async () => {
    const strict = await createTestApp({ requirePkce: true });
    const callback = await expectAuthorizeError(strict, strict.codeClient, {}, 'invalid_request');
    expect(callback.searchParams.get('error_description')).toBe('code challenge required');
  });

  it('completes the flow under requirePkce: true when an S256 challenge is sent and verified', async () => {
    const strict = await createTestApp({ requirePkce: true });
    const { verifier, challenge } = createPkcePair();
    const code = await codeWithChallenge(challenge, strict);
    expect((await redeemCode(strict.app, '', strict.codeClient, code, { code_verifier: verifier })).status).toBe(200);
  });

  it('refuses plain under requirePkce: true as well', async () => {
    const strict = await createTestApp({ requirePkce: true });
    const { challenge } = createPkcePair();
    await expectAuthorizeError(strict, strict.codeClient, { code_challenge: challenge, code_challenge_method: 'plain' }, 'invalid_request');
  });

  it('redirects error=invalid_request "code challenge required" for an integration registered with requirePkce: true', async () => {
    const { client, clientSecret } = await registerClient(t.store, {
      name: 'Strict Mobile', flow: 'authorization_code', redirectUris: [REDIRECT_URI],
      allowedScopes: ['envelopes:read'], requirePkce: true,
    });
    const strictClient = { clientId: client.clientId, clientSecret };
    const callback = await expectAuthorizeError(t, strictClient, {}, 'invalid_request');
    expect(callback.searchParams.get('error_description')).toBe('code challenge required');

    const { verifier, challenge } = createPkcePair();
    const code = await codeWithChallenge(challenge, t, strictClient);
    expect((await redeemCode(t.app, '', strictClient, code, { code_verifier: verifier })).status).toBe(200);
  });

  it('leaves the other integrations of the same server free not to use PKCE', async () => {
    await registerClient(t.store, {
      name: 'Strict Mobile', flow: 'authorization_code', redirectUris: [REDIRECT_URI], requirePkce: true,
    });
    const code = await obtainCode(t.app, t.codeClient);
    expect((await redeemCode(t.app, '', t.codeClient, code)).status).toBe(200);
  });
});
