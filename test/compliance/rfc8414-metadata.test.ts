// RFC 8414 (authorization server metadata) for both base addresses of SPEC §4 and §9, and RFC 9207 (iss).
import { beforeAll, describe, expect, it } from 'vitest';
import request from 'supertest';
import { ISSUER, LEGACY_ISSUER, createTestApp, createTestRouter, type TestApp, type TestClient } from '../helpers/app.js';
import { createMemoryStore } from '../../src/stores/memory/index.js';
import { authorize } from '../helpers/browser-flow.js';

const WELL_KNOWN = '/.well-known/oauth-authorization-server';

/** The three addresses a client may derive from an issuer (RFC 8414 §3.1 inserts, many clients append). */
const LOCATIONS = [
  { name: 'main issuer', issuer: ISSUER, path: WELL_KNOWN, prefix: '' },
  { name: 'legacy issuer, well-known inserted before the path (RFC 8414 §3.1)', issuer: LEGACY_ISSUER, path: `${WELL_KNOWN}/legacy`, prefix: '/legacy' },
  { name: 'legacy issuer, well-known appended to the path', issuer: LEGACY_ISSUER, path: `/legacy${WELL_KNOWN}`, prefix: '/legacy' },
] as const;

describe('RFC 8414 authorization server metadata', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });

  describe.each(LOCATIONS)('$name at $path', ({ issuer, path }) => {
    const get = () => request(t.app).get(path);

    it('is served as JSON with 200 (RFC 8414 §3.2)', async () => {
      const res = await get();
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      expect(typeof res.body).toBe('object');
    });

    it('says Content-Type as every JSON answer of the router does, its own 405 and SPEC §4.2\'s token answers', async () => {
      const [res, wrongMethod] = [await get(), await request(t.app).put(path)];
      expect(res.headers['content-type']).toBe('application/json;charset=UTF-8');
      expect(res.headers['content-type']).toBe(wrongMethod.headers['content-type']);
    });

    it('is never sniffed as another type: X-Content-Type-Options: nosniff beside Access-Control-Allow-Origin: * (the Fetch standard)', async () => {
      const res = await get();
      expect(res.headers['x-content-type-options']).toBe('nosniff');
      expect(res.headers['access-control-allow-origin']).toBe('*');
    });

    it('has an issuer identical to the issuer it was requested for (RFC 8414 §3.3: "MUST be identical")', async () => {
      expect((await get()).body.issuer).toBe(issuer);
    });

    it('has an https-or-http issuer with no query and no fragment (RFC 8414 §2)', async () => {
      const url = new URL((await get()).body.issuer as string);
      expect(url.search).toBe('');
      expect(url.hash).toBe('');
    });

    it('lists the authorization, token, revocation and introspection endpoints under the issuer', async () => {
      const body = (await get()).body;
      expect(body.authorization_endpoint).toBe(`${issuer}/oauth2/authorize`);
      expect(body.token_endpoint).toBe(`${issuer}/oauth2/token`);
      expect(body.revocation_endpoint).toBe(`${issuer}/oauth2/revoke`);
      expect(body.introspection_endpoint).toBe(`${issuer}/oauth2/introspect`);
    });

    it('offers response_type code only', async () => {
      expect((await get()).body.response_types_supported).toEqual(['code']);
    });

    it('lists exactly the three grant types of SPEC §1', async () => {
      const grants = (await get()).body.grant_types_supported as string[];
      expect([...grants].sort()).toEqual(['authorization_code', 'client_credentials', 'refresh_token']);
    });

    it('lists client_secret_basic (SPEC §5.1) and client_secret_post (RFC 6749 §2.3.1) at token, revocation and introspection', async () => {
      const body = (await get()).body;
      expect(body.token_endpoint_auth_methods_supported).toEqual(['client_secret_basic', 'client_secret_post']);
      expect(body.revocation_endpoint_auth_methods_supported).toEqual(['client_secret_basic', 'client_secret_post']);
      expect(body.introspection_endpoint_auth_methods_supported).toEqual(['client_secret_basic', 'client_secret_post']);
    });

    it('offers PKCE with S256 only, never plain (RFC 7636 §4.2, RFC 8414 §2)', async () => {
      expect((await get()).body.code_challenge_methods_supported).toEqual(['S256']);
    });

    it('announces the iss parameter in authorization responses (RFC 9207 §3)', async () => {
      expect((await get()).body.authorization_response_iss_parameter_supported).toBe(true);
    });

    it('omits scopes_supported when no scopes are configured', async () => {
      expect((await get()).body).not.toHaveProperty('scopes_supported');
    });

    it('answers a HEAD request too (GET semantics, no body, the GET\'s Content-Length: RFC 9110 §9.3.2)', async () => {
      const res = await request(t.app).head(path);
      expect(res.status).toBe(200);
      expect(res.text ?? '').toBe('');
      expect(res.headers['content-length']).toBe(String(Buffer.byteLength((await get()).text)));
    });

    it('answers every other method with 405, Allow: GET, HEAD and a JSON error (RFC 9110 §15.5.6), OPTIONS as the token endpoint does', async () => {
      for (const method of ['put', 'post', 'delete', 'patch', 'options'] as const) {
        const res = await request(t.app)[method](path);
        expect(res.status, method).toBe(405);
        expect(res.headers.allow, method).toBe('GET, HEAD');
        expect(res.headers['content-type'], method).toBe('application/json;charset=UTF-8');
        expect(res.headers['cache-control'], method).toBe('no-store');
        expect(res.headers['content-length'], method).toBe(String(Buffer.byteLength(res.text)));
        expect(res.body, method).toEqual({ error: 'invalid_request', error_description: 'this endpoint accepts only GET and HEAD' });
      }
    });
  });

  it('serves a different document per issuer: the main one never names the legacy address and vice versa', async () => {
    const main = (await request(t.app).get(WELL_KNOWN)).body;
    const legacy = (await request(t.app).get(`${WELL_KNOWN}/legacy`)).body;
    expect(JSON.stringify(main)).not.toContain('/legacy');
    for (const value of Object.values(legacy)) {
      if (typeof value === 'string' && value.startsWith('http')) expect(value.startsWith(LEGACY_ISSUER)).toBe(true);
    }
  });

  it('serves the same legacy document at the inserted and the appended location', async () => {
    const inserted = await request(t.app).get(`${WELL_KNOWN}/legacy`);
    const appended = await request(t.app).get(`/legacy${WELL_KNOWN}`);
    expect(appended.body).toEqual(inserted.body);
  });

  it('names each of its routes by one address: an issuer without a path has one, an issuer with a path two routes', () => {
    // A tracer reports the route's path as the request's `http.route` (OpenTelemetry's instrumentation-express):
    // `/.well-known/oauth-authorization-server,/.well-known/oauth-authorization-server` before. One route for an
    // issuer's two addresses was a bare `GET` under dd-trace and both addresses joined by a comma under New Relic
    // and Elastic.
    const oauth = createTestRouter(createMemoryStore(), { legacy: { issuer: LEGACY_ISSUER } });
    const paths = (oauth.router as unknown as { stack: { route?: { path: unknown } }[] }).stack
      .map((layer) => layer.route?.path).filter((path) => JSON.stringify(path).includes(WELL_KNOWN));
    expect(paths).toEqual([WELL_KNOWN, `${WELL_KNOWN}/legacy`, `/legacy${WELL_KNOWN}`]);
  });

  it('has no metadata for a path that is not an issuer (404)', async () => {
    expect((await request(t.app).get(`${WELL_KNOWN}/nope`)).status).toBe(404);
    expect((await request(t.app).get(`/nope${WELL_KNOWN}`)).status).toBe(404);
  });

  it('has no legacy document when the legacy address is disabled', async () => {
    const noLegacy = await createTestApp({ legacy: false });
    expect((await request(noLegacy.app).get(`${WELL_KNOWN}/legacy`)).status).toBe(404);
    expect((await request(noLegacy.app).get(WELL_KNOWN)).body.issuer).toBe(ISSUER);
  });

  it('publishes scopes_supported with the configured scopes when the scopes option is set (RFC 8414 §2)', async () => {
    const scoped = await createTestApp({ scopes: { 'envelopes:read': 'Read your envelopes', 'envelopes:sign': 'Sign envelopes for you' } });
    for (const path of [WELL_KNOWN, `${WELL_KNOWN}/legacy`, `/legacy${WELL_KNOWN}`]) {
      const body = (await request(scoped.app).get(path)).body;
      expect([...(body.scopes_supported as string[])].sort(), path).toEqual(['envelopes:read', 'envelopes:sign']);
    }
  });

  it('uses the issuer exactly as configured, without a trailing slash', async () => {
    const slashed = await createTestApp({ issuer: 'http://auth.test/', legacy: { issuer: 'http://auth.test/legacy/' } });
    expect((await request(slashed.app).get(WELL_KNOWN)).body.issuer).toBe(ISSUER);
    expect((await request(slashed.app).get(`${WELL_KNOWN}/legacy`)).body.issuer).toBe(LEGACY_ISSUER);
  });

  describe('the issuer matches the iss parameter of authorization responses (RFC 9207 §2.4)', () => {
    const cases: ReadonlyArray<{ name: string; path: string; prefix: string; client: (t: TestApp) => TestClient }> = [
      { name: 'main', path: WELL_KNOWN, prefix: '', client: (app) => app.codeClient },
      { name: 'legacy', path: `${WELL_KNOWN}/legacy`, prefix: '/legacy', client: (app) => app.legacyCodeClient },
    ];

    it.each(cases)('$name: iss of a successful response equals the metadata issuer', async ({ path, prefix, client }) => {
      const metadata = (await request(t.app).get(path)).body;
      const callback = await authorize(t.app, client(t), { prefix, query: { prompt: 'consent' } });
      expect(callback.searchParams.get('code')).toBeTruthy();
      expect(callback.searchParams.get('iss')).toBe(metadata.issuer);
    });

    it.each(cases)('$name: iss of an error response (access_denied) equals the metadata issuer', async ({ path, prefix, client }) => {
      const metadata = (await request(t.app).get(path)).body;
      const callback = await authorize(t.app, client(t), { prefix, decision: 'deny', query: { prompt: 'consent' } });
      expect(callback.searchParams.get('error')).toBe('access_denied');
      expect(callback.searchParams.get('iss')).toBe(metadata.issuer);
    });
  });
});
