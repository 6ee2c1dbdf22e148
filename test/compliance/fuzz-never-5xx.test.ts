// Property tests: whatever a client sends, the answer is an RFC error (never a 5xx, a stack trace or a hang),
// and the authorization endpoint never redirects anywhere but a registered redirect_uri.
import { beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import request from 'supertest';
import { basic, createTestApp, REDIRECT_URI, type TestApp } from '../helpers/app.js';

const TOKEN_ERRORS = new Set([
  'invalid_request', 'invalid_client', 'invalid_grant', 'unauthorized_client', 'unsupported_grant_type', 'invalid_scope',
]);
const AUTHORIZE_ERRORS = new Set(['invalid_request', 'unsupported_response_type', 'invalid_scope', 'unauthorized_client', 'access_denied']);
const RUNS = 150;

// Strings that matter to the parsers: separators, encodings, control and non-ASCII characters.
const nasty = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.constantFrom('', ' ', '%', '%zz', '+', '&', '=', '\u0000', 'Basic', 'Bearer x', '\u00e9', '../', 'a'.repeat(300)),
);

describe('no input makes the server fail', () => {
  let t: TestApp;
  beforeAll(async () => { t = await createTestApp({ loginRateLimit: false }); });

  it('token endpoint: random grant parameters and Authorization headers get a JSON RFC 6749 §5.2 error or a token', async () => {
    const grantTypes = fc.constantFrom('authorization_code', 'client_credentials', 'refresh_token', 'password', '', 'x');
    await fc.assert(fc.asyncProperty(
      grantTypes, nasty, nasty, nasty, fc.constantFrom('valid', 'random', 'none'), nasty,
      async (grantType, code, redirectUri, scope, auth, header) => {
        const req = request(t.app).post('/oauth2/token').type('form');
        if (auth === 'valid') req.set('Authorization', basic(t.credentialsClient));
        if (auth === 'random') req.set('Authorization', header.replace(/[^\x20-\x7e]/g, ''));
        const res = await req.send(new URLSearchParams({ grant_type: grantType, code, redirect_uri: redirectUri, scope, refresh_token: code }).toString());
        expect(res.status).toBeLessThan(500);
        if (res.status !== 200) {
          expect(TOKEN_ERRORS.has(res.body.error), JSON.stringify(res.body)).toBe(true);
          expect(res.text).not.toMatch(/\bat .+\.(js|ts):\d+/);
        }
      },
    ), { numRuns: RUNS });
  });

  it('token endpoint: random raw bodies and content types never give a 5xx', async () => {
    await fc.assert(fc.asyncProperty(
      fc.string({ unit: 'binary', maxLength: 200 }), fc.constantFrom('application/x-www-form-urlencoded', 'application/json', 'text/plain', 'multipart/form-data; boundary=x'),
      async (body, type) => {
        const res = await request(t.app).post('/oauth2/token').set('Authorization', basic(t.codeClient)).set('Content-Type', type).send(body);
        expect(res.status).toBeLessThan(500);
        expect(res.headers['content-type']).toBe('application/json;charset=UTF-8');
      },
    ), { numRuns: RUNS });
  });

  it('authorization endpoint: random queries get a page or a redirect to the registered redirect_uri only', async () => {
    const clientIds = fc.constantFrom(t.codeClient.clientId, t.credentialsClient.clientId, 'unknown', '');
    const redirects = fc.oneof(fc.constant(REDIRECT_URI), fc.constant('https://evil.example/cb'), fc.constant(`${REDIRECT_URI}?x=1`), nasty);
    await fc.assert(fc.asyncProperty(
      clientIds, redirects, fc.constantFrom('code', 'token', '', 'code token'), nasty, nasty, nasty,
      async (clientId, redirectUri, responseType, state, scope, challenge) => {
        const query = new URLSearchParams({ client_id: clientId, redirect_uri: redirectUri, response_type: responseType, state, scope, code_challenge: challenge, code_challenge_method: 'S256' });
        const res = await request(t.app).get(`/oauth2/authorize?${query.toString()}`);
        expect([200, 302, 400]).toContain(res.status);
        if (res.status === 302) {
          const location = res.headers.location!;
          // RFC 6749 §4.2.2.1: a request for a token in the front channel gets its error in the fragment.
          const implicit = responseType.split(' ').includes('token');
          expect(location.startsWith(`${REDIRECT_URI}${implicit ? '#' : '?'}`), location).toBe(true);
          const url = new URL(location);
          const error = (implicit ? new URLSearchParams(url.hash.slice(1)) : url.searchParams).get('error');
          expect(AUTHORIZE_ERRORS.has(error ?? ''), location).toBe(true);
        }
      },
    ), { numRuns: RUNS });
  });

  it('requireBearer: random Authorization headers get 400, 401 or 403, never a 5xx', async () => {
    await fc.assert(fc.asyncProperty(nasty, async (header) => {
      const clean = header.replace(/[^\x20-\x7e]/g, '');
      const res = await request(t.app).get('/api/v1/me').set('Authorization', clean);
      expect([400, 401]).toContain(res.status);
      expect(res.headers['www-authenticate']).toMatch(/^Bearer realm="/);
    }), { numRuns: RUNS });
  });
});
