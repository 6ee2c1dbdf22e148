// RFC 6749 §5.2 / §4.1.2.1 error responses: error_description never echoes input and keeps to its character
// set; an over-long state is not echoed; redirects carrying a code or an error are not cacheable.
import { beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import request from 'supertest';
import { basic, createTestApp, REDIRECT_URI, type TestApp } from '../helpers/app.js';
import { authorize, authorizeQuery, signIn, signInAndGetConsent } from '../helpers/browser-flow.js';
import { consentForm, postConsent } from '../helpers/spec-requests.js';
import { toErrorDescription } from '../../src/http/error-description.js';

// error_description = 1*( %x20-21 / %x23-5B / %x5D-7E )
const DESCRIPTION = /^[\x20\x21\x23-\x5B\x5D-\x7E]+$/;
const RUNS = 120;

/** Input a test can recognise in an answer: a marker no message of ours contains, then anything at all. */
const hostile = fc.tuple(
  fc.stringMatching(/^[A-Za-z0-9]{8,24}$/),
  fc.oneof(fc.string({ maxLength: 12 }), fc.string({ unit: 'binary', maxLength: 12 }), fc.constantFrom('"', '\\', '\u0000', '\r\n', 'é')),
).map(([core, tail]) => ({ marker: `zq${core}`, value: `zq${core}${tail}` }));

function expectSafeDescription(description: unknown, marker: string): void {
  expect(typeof description).toBe('string');
  expect(description as string).toMatch(DESCRIPTION);
  expect(description as string).not.toContain(marker);
}

describe('RFC 6749 §5.2: error_description never echoes request input and stays within its character set', () => {
  let t: TestApp;
  // Hundreds of failed client authentications below: the client rate limit would rightly answer 429.
  beforeAll(async () => { t = await createTestApp({ loginRateLimit: false, clientAuthRateLimit: false }); });

  it('an unsupported grant_type is not named back', async () => {
    await fc.assert(fc.asyncProperty(hostile, async ({ marker, value }) => {
      const res = await request(t.app).post('/oauth2/token').set('Authorization', basic(t.credentialsClient)).type('form')
        .send(new URLSearchParams({ grant_type: value }).toString());
      expect(res.status).toBe(400);
      expect(res.body.error).toBe('unsupported_grant_type');
      expectSafeDescription(res.body.error_description, marker);
    }), { numRuns: RUNS });
  });

  it('a refused scope is not named back, at the token endpoint or in the authorization redirect', async () => {
    await fc.assert(fc.asyncProperty(hostile, async ({ marker, value }) => {
      const token = await request(t.app).post('/oauth2/token').set('Authorization', basic(t.credentialsClient)).type('form')
        .send(new URLSearchParams({ grant_type: 'client_credentials', scope: value }).toString());
      expect(token.status).toBe(400);
      expect(token.body.error).toBe('invalid_scope');
      expectSafeDescription(token.body.error_description, marker);

      const redirect = await request(t.app).get(`/oauth2/authorize?${authorizeQuery(t.codeClient, { scope: value })}`);
      expect(redirect.status).toBe(302);
      const callback = new URL(redirect.headers.location!);
      expect(callback.searchParams.get('error')).toBe('invalid_scope');
      expectSafeDescription(callback.searchParams.get('error_description'), marker);
    }), { numRuns: RUNS });
  });

  it('an unknown client_id, in the form or in Basic credentials, is not named back', async () => {
    await fc.assert(fc.asyncProperty(hostile, async ({ marker, value }) => {
      const posted = await request(t.app).post('/oauth2/token').type('form')
        .send(new URLSearchParams({ grant_type: 'client_credentials', client_id: value, client_secret: 'x' }).toString());
      expect(posted.status).toBe(401);
      expectSafeDescription(posted.body.error_description, marker);
      const encoded = Buffer.from(`${encodeURIComponent(value)}:secret`).toString('base64');
      const basicAuth = await request(t.app).post('/oauth2/token').set('Authorization', `Basic ${encoded}`).type('form')
        .send('grant_type=client_credentials');
      expect(basicAuth.status).toBe(401);
      expectSafeDescription(basicAuth.body.error_description, marker);
    }), { numRuns: RUNS });
  });

  it('a repeated parameter with a made-up name is ignored (§3.1: "MUST ignore unrecognized request parameters"), at the token and the authorization endpoint', async () => {
    await fc.assert(fc.asyncProperty(hostile, async ({ value }) => {
      const name = encodeURIComponent(value);
      const token = await request(t.app).post('/oauth2/token').set('Authorization', basic(t.credentialsClient)).type('form')
        .send(`grant_type=client_credentials&${name}=1&${name}=2`);
      expect(token.status).toBe(200);
      expect(token.body.access_token).toEqual(expect.any(String));
      // Signed out: the login page, as without the parameter.
      const page = await request(t.app).get(`/oauth2/authorize?${authorizeQuery(t.codeClient)}&${name}=1&${name}=2`);
      expect(page.status).toBe(200);
      expect(page.text).toContain('name="password"');
    }), { numRuns: RUNS });
  });

  it('RFC 8707 resource, repeated, is an unrecognized parameter here and ignored', async () => {
    const res = await request(t.app).post('/oauth2/token').set('Authorization', basic(t.credentialsClient)).type('form')
      .send('grant_type=client_credentials&resource=https%3A%2F%2Fa.example&resource=https%3A%2F%2Fb.example');
    expect(res.status).toBe(200);
  });

  it('§3.1: a parameter the endpoint does not read is ignored repeated, though another endpoint reads it', async () => {
    // state, username, code_challenge are read by the authorization endpoint or the login form, not the token endpoint.
    for (const name of ['state', 'username', 'code_challenge', 'csrf_token', 'token', 'max_age']) {
      const res = await request(t.app).post('/oauth2/token').set('Authorization', basic(t.credentialsClient)).type('form')
        .send(`grant_type=client_credentials&${name}=a&${name}=b`);
      expect(res.status, name).toBe(200);
    }
    // And at the revocation endpoint, which reads token and token_type_hint: grant_type or scope twice is nothing to it.
    const revoked = await request(t.app).post('/oauth2/revoke').set('Authorization', basic(t.credentialsClient)).type('form')
      .send('token=unknown&grant_type=a&grant_type=b&scope=x&scope=y');
    expect(revoked.status).toBe(200);
    // The authorization endpoint: grant_type and refresh_token twice are not its parameters.
    const page = await request(t.app).get(`/oauth2/authorize?${authorizeQuery(t.codeClient)}&grant_type=a&grant_type=b&refresh_token=1&refresh_token=2`);
    expect(page.status).toBe(200);
    expect(page.text).toContain('name="password"');
  });

  it('a known parameter is still named when repeated (server vocabulary, not input)', async () => {
    const res = await request(t.app).post('/oauth2/token').set('Authorization', basic(t.credentialsClient)).type('form')
      .send('grant_type=client_credentials&scope=a&scope=b');
    expect(res.body).toEqual({ error: 'invalid_request', error_description: 'parameter scope is repeated' });
  });

  it('a wrong method at the token endpoint is not named back', async () => {
    const res = await request(t.app).put('/oauth2/token');
    expect(res.status).toBe(405);
    expect(res.body).toEqual({ error: 'invalid_request', error_description: 'this endpoint accepts only POST' });
  });

  it('the WWW-Authenticate error_description of requireBearer keeps to the same set', async () => {
    const res = await request(t.app).get('/api/v1/me').set('Authorization', 'Bearer not-a-token');
    expect(res.status).toBe(401);
    const description = /error_description="([^"]*)"/.exec(res.headers['www-authenticate']!)?.[1];
    expect(description).toMatch(DESCRIPTION);
  });

  it('whatever text reaches the builder, what leaves it is in the set and at most 300 characters', () => {
    fc.assert(fc.property(fc.string({ unit: 'binary', maxLength: 400 }), (text) => {
      const description = toErrorDescription(text);
      expect(description).toMatch(DESCRIPTION);
      expect(description.length).toBeLessThanOrEqual(300);
    }), { numRuns: 500 });
  });
});

describe('RFC 6749 §4.1.2.1: state in the error redirect', () => {
  let t: TestApp;
  beforeAll(async () => { t = await createTestApp({ loginRateLimit: false }); });

  it('an over-long state (over 2,048 characters) is refused on an error page, not redirected without it or with kilobytes of it', async () => {
    const state = 's'.repeat(5000);
    const res = await request(t.app).get(`/oauth2/authorize?${authorizeQuery(t.codeClient, { state })}`);
    expect(res.status).toBe(400);
    expect(res.headers.location).toBeUndefined();
    expect(res.text).toContain('state is too long');
  });

  it('a state is measured as the callback carries it: 2,048 characters once encoded, whatever the characters', async () => {
    for (const state of ['中'.repeat(700), '+'.repeat(700), 'é'.repeat(400)]) {
      const res = await request(t.app).get(`/oauth2/authorize?${authorizeQuery(t.codeClient, { state })}`);
      expect(res.status).toBe(400);
      expect(res.headers.location).toBeUndefined();
      expect(res.text).toContain('state is too long');
    }
  });

  it('the longest state a request may carry, in the characters that encode longest, still signs the user in', async () => {
    for (const state of ['中'.repeat(227), '+'.repeat(682), `${'s'.repeat(2047)}`]) {
      const callback = await authorize(t.app, t.codeClient, { query: { state } });
      expect(callback.searchParams.get('state')).toBe(state);
      expect(callback.searchParams.get('code')).toBeTruthy();
    }
  });

  it('a request too long for the login form to carry back (a scope padded with repeats) is refused by redirect, not shown a login page no sign-in gets past', async () => {
    const scope = Array.from({ length: 600 }, () => 'envelopes:read').join(' ');
    const res = await request(t.app).get(`/oauth2/authorize?${authorizeQuery(t.codeClient, { scope })}`);
    expect(res.status).toBe(302);
    const callback = new URL(res.headers.location!);
    expect(callback.searchParams.get('error')).toBe('invalid_request');
    expect(callback.searchParams.get('state')).toBe('xyz-123');
  });

  it.each([
    ['%E9 alone (Latin-1 é)', 'caf%E9', 'caf%E9'],
    ['a truncated sequence', 'ab%E2%9C', 'ab%E2%9C'],
    ['an encoded U+FFFD, which the parser makes of such octets too', '%EF%BF%BD', '%EF%BF%BD'],
    ['lower-case escapes and a plus', 'a+b%e9', 'a%20b%E9'],
  ])('a state whose octets are not UTF-8 (%s) is refused, and echoed as the same octets', async (_label, raw, echoed) => {
    const res = await request(t.app).get(`/oauth2/authorize?${authorizeQuery(t.codeClient, { state: undefined })}&state=${raw}`);
    expect(res.status).toBe(302);
    const callback = new URL(res.headers.location!);
    expect(callback.searchParams.get('error')).toBe('invalid_request');
    expect(callback.searchParams.get('error_description')).toMatch(/state must be UTF-8/);
    expect(callback.searchParams.has('code')).toBe(false);
    expect(res.headers.location!).toMatch(new RegExp(`&state=${echoed.replace(/[+%]/g, '\\$&')}&iss=`));
  });

  it('an empty state beside a real one is omitted (§3.1), and the real one echoed', async () => {
    const res = await request(t.app).get(`/oauth2/authorize?${authorizeQuery(t.codeClient, { state: undefined, response_type: 'foo' })}&state=&state=abc`);
    const callback = new URL(res.headers.location!);
    expect(callback.searchParams.get('error')).toBe('unsupported_response_type');
    expect(callback.searchParams.getAll('state')).toEqual(['abc']);
  });

  it('a state of 2,048 characters once encoded is echoed exactly (its decoded value) with another error', async () => {
    // 2,026 that encode as themselves, and eight that take 22 once encoded.
    const state = `${'s'.repeat(2026)}"&é\\ +%`;
    const res = await request(t.app).get(`/oauth2/authorize?${authorizeQuery(t.codeClient, { state, response_type: 'foo' })}`);
    const callback = new URL(res.headers.location!);
    expect(callback.searchParams.get('error')).toBe('unsupported_response_type');
    expect(callback.searchParams.get('state')).toBe(state);
  });

  it('the same state is echoed exactly (its decoded value) in the fragment of an implicit request\'s error (RFC 6749 §4.2.2.1)', async () => {
    const state = `${'s'.repeat(2026)}"&é\\ +%`;
    const res = await request(t.app).get(`/oauth2/authorize?${authorizeQuery(t.codeClient, { state, response_type: 'token' })}`);
    const callback = new URL(res.headers.location!);
    expect(callback.search).toBe('');
    const fragment = new URLSearchParams(callback.hash.slice(1));
    expect(fragment.get('error')).toBe('unsupported_response_type');
    expect(fragment.get('state')).toBe(state);
  });
});

describe('redirects carrying a code or an error are not stored (RFC 6749 §10.5, RFC 9700 §4.2.4)', () => {
  let t: TestApp;
  beforeAll(async () => { t = await createTestApp({ loginRateLimit: false, rememberConsent: false }); });

  function expectNotStored(res: request.Response): void {
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.headers.pragma).toBe('no-cache');
    expect(res.headers['referrer-policy']).toBe('no-referrer');
  }

  it('the consent redirect with the code', async () => {
    const agent = request.agent(t.app);
    const consent = consentForm(await signInAndGetConsent(agent, '', authorizeQuery(t.codeClient)));
    const res = await postConsent(agent, '', { csrf_token: consent.csrfToken, request_id: consent.requestId, decision: 'allow' });
    expect(res.status).toBe(303);
    expect(new URL(res.headers.location!).searchParams.get('code')).toBeTruthy();
    expectNotStored(res);
  });

  it('the redirect with access_denied', async () => {
    const agent = request.agent(t.app);
    const consent = consentForm(await signInAndGetConsent(agent, '', authorizeQuery(t.codeClient)));
    const res = await postConsent(agent, '', { csrf_token: consent.csrfToken, request_id: consent.requestId, decision: 'deny' });
    expect(new URL(res.headers.location!).searchParams.get('error')).toBe('access_denied');
    expectNotStored(res);
  });

  it('the authorization endpoint\'s error redirect, and its login page', async () => {
    const error = await request(t.app).get(`/oauth2/authorize?${authorizeQuery(t.codeClient, { response_type: 'token' })}`);
    expect(error.status).toBe(302);
    expect(error.headers.location!.startsWith(REDIRECT_URI)).toBe(true);
    expectNotStored(error);
    const page = await request(t.app).get(`/oauth2/authorize?${authorizeQuery(t.codeClient)}`);
    expect(page.status).toBe(200);
    expectNotStored(page);
  });

  it('the remembered-consent redirect with the code', async () => {
    const remembering = await createTestApp({ loginRateLimit: false });
    const first = await authorize(remembering.app, remembering.codeClient);
    expect(first.searchParams.get('code')).toBeTruthy();
    // The same user signing in again for the same integration and scopes skips the consent page.
    const again = await signIn(request.agent(remembering.app), '', authorizeQuery(remembering.codeClient));
    expect(again.status).toBe(302);
    expect(new URL(again.headers.location!).searchParams.get('code')).toBeTruthy();
    expectNotStored(again);
  });
});
