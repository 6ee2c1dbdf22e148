// express-oauth-router/metrics: counters and histograms move by exactly what real HTTP requests did.
import express from 'express';
import request from 'supertest';
import { Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import { createMemoryStore } from '../../src/stores/memory/index.js';
import { createOAuthMetrics, type OAuthMetrics } from '../../src/metrics/index.js';
import type { OAuthRouterOptions } from '../../src/options.js';
import type { OAuthRouter } from '../../src/types.js';
import { ISSUER, LEGACY_ISSUER, basic, type TestClient } from '../helpers/app.js';
import { authorize, authorizeQuery, obtainCode } from '../helpers/browser-flow.js';
import { meteredApp } from '../helpers/metered-app.js';
import { parseScrape, type Scrape } from '../helpers/prometheus-text.js';

const open: OAuthMetrics[] = [];
afterEach(() => {
  for (const metrics of open.splice(0)) metrics.close();
});

interface MetricsApp {
  readonly app: express.Express;
  readonly oauth: OAuthRouter;
  readonly metrics: OAuthMetrics;
  readonly codeClient: TestClient;
  readonly credentialsClient: TestClient;
  readonly legacyCredentialsClient: TestClient;
  scrape(): Promise<Scrape>;
}

async function createMetricsApp(options: Partial<OAuthRouterOptions> = {}, metrics = createOAuthMetrics()): Promise<MetricsApp> {
  open.push(metrics);
  const store = createMemoryStore();
  const { app, oauth, register } = meteredApp(metrics.instrumentStore(store), metrics, options);
  return {
    app, oauth, metrics,
    codeClient: await register('authorization_code'),
    credentialsClient: await register('client_credentials'),
    legacyCredentialsClient: await register('client_credentials', new Date('2020-06-01T00:00:00Z')),
    scrape: async () => {
      const res = await request(app).get('/metrics');
      expect(res.status).toBe(200);
      return parseScrape(res.text);
    },
  };
}

function clientCredentials(app: express.Express, client: TestClient, prefix = '', scope?: string): request.Test {
  return request(app).post(`${prefix}/oauth2/token`).set('Authorization', basic(client)).type('form')
    .send({ grant_type: 'client_credentials', ...(scope ? { scope } : {}) });
}

/** `after - before` of one series. */
function moved(before: Scrape, after: Scrape, name: string, labels: Record<string, string> = {}): number {
  return after.value(name, labels) - before.value(name, labels);
}

describe('Prometheus metrics', () => {
  it('the handler answers the text exposition format with its content type and Cache-Control: no-store', async () => {
    const { app } = await createMetricsApp();
    const res = await request(app).get('/metrics');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('text/plain; version=0.0.4; charset=utf-8');
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.text).toContain('# TYPE oauth_tokens_issued_total counter');
    expect(res.text).toContain('# TYPE oauth_token_request_duration_seconds histogram');
    // Every series a dashboard expects is there from the start, at 0.
    expect(parseScrape(res.text).labelSets('oauth_tokens_issued_total')).toHaveLength(6);
  });

  it('tokens issued count once per token, by grant type and issuer', async () => {
    const { app, codeClient, credentialsClient, legacyCredentialsClient, scrape } = await createMetricsApp();
    const before = await scrape();
    for (let i = 0; i < 3; i += 1) expect((await clientCredentials(app, credentialsClient)).status).toBe(200);
    for (let i = 0; i < 2; i += 1) expect((await clientCredentials(app, legacyCredentialsClient, '/legacy')).status).toBe(200);
    const code = await obtainCode(app, codeClient);
    const exchanged = await request(app).post('/oauth2/token').set('Authorization', basic(codeClient)).type('form')
      .send({ grant_type: 'authorization_code', code, redirect_uri: 'https://client.example/callback' });
    expect(exchanged.status).toBe(200);
    const refreshed = await request(app).post('/oauth2/token').set('Authorization', basic(codeClient)).type('form')
      .send({ grant_type: 'refresh_token', refresh_token: exchanged.body.refresh_token as string });
    expect(refreshed.status).toBe(200);
    const after = await scrape();

    const issued = (grant_type: string, issuer: string) => moved(before, after, 'oauth_tokens_issued_total', { grant_type, issuer });
    expect(issued('client_credentials', ISSUER)).toBe(3);
    expect(issued('client_credentials', LEGACY_ISSUER)).toBe(2);
    expect(issued('authorization_code', ISSUER)).toBe(1);
    expect(issued('refresh_token', ISSUER)).toBe(1);
    const timed = (grant_type: string) => moved(before, after, 'oauth_token_request_duration_seconds_count', { grant_type, outcome: 'success' });
    expect(timed('client_credentials')).toBe(5);
    expect(timed('authorization_code')).toBe(1);
    expect(timed('refresh_token')).toBe(1);
    // The +Inf bucket holds every observation; the sum is a duration, not zero.
    expect(moved(before, after, 'oauth_token_request_duration_seconds_bucket', { grant_type: 'client_credentials', outcome: 'success', le: '+Inf' })).toBe(5);
    expect(moved(before, after, 'oauth_token_request_duration_seconds_sum', { grant_type: 'client_credentials', outcome: 'success' })).toBeGreaterThan(0);
  });

  it('error answers count by endpoint, error code and status, and failed token requests are timed as errors', async () => {
    const { app, codeClient, credentialsClient, scrape } = await createMetricsApp();
    const token = await clientCredentials(app, credentialsClient, '', 'envelopes:read');
    const accessToken = token.body.access_token as string;
    const before = await scrape();
    const wrongSecret = { clientId: credentialsClient.clientId, clientSecret: 'wrong' };
    for (let i = 0; i < 2; i += 1) expect((await clientCredentials(app, wrongSecret)).status).toBe(401);
    expect((await request(app).post('/oauth2/token').set('Authorization', basic(credentialsClient)).type('form')
      .send({ grant_type: 'password' })).status).toBe(400);
    expect((await request(app).post('/oauth2/revoke').type('form').send({ token: 'x' })).status).toBe(401);
    expect((await request(app).post('/oauth2/introspect').set('Authorization', basic(credentialsClient)).type('form').send({})).status).toBe(400);
    expect((await request(app).get(`/oauth2/authorize?${authorizeQuery({ clientId: 'nobody', clientSecret: '' })}`)).status).toBe(400);
    expect((await request(app).get(`/oauth2/authorize?${authorizeQuery(codeClient, { response_type: 'token' })}`)).status).toBe(302);
    const denied = await authorize(app, codeClient, { decision: 'deny' });
    expect(denied.searchParams.get('error')).toBe('access_denied');
    expect((await request(app).get('/api/v1/me')).status).toBe(401);
    expect((await request(app).get('/api/v1/me').set('Authorization', 'Bearer not-a-token')).status).toBe(401);
    expect((await request(app).get('/api/v1/sign').set('Authorization', `Bearer ${accessToken}`)).status).toBe(403);
    for (let i = 0; i < 3; i += 1) expect((await request(app).get('/api/v1/me').set('Authorization', `Bearer ${accessToken}`)).status).toBe(200);
    const after = await scrape();

    const errors = (endpoint: string, error: string, status: number) => moved(before, after, 'oauth_errors_total', { endpoint, error, status: String(status) });
    expect(errors('token', 'invalid_client', 401)).toBe(2);
    expect(errors('token', 'unsupported_grant_type', 400)).toBe(1);
    expect(errors('revocation', 'invalid_client', 401)).toBe(1);
    expect(errors('introspection', 'invalid_request', 400)).toBe(1);
    expect(errors('authorization', 'invalid_client', 400)).toBe(1);
    expect(errors('authorization', 'unsupported_response_type', 302)).toBe(1);
    expect(errors('authorization', 'access_denied', 303)).toBe(1);
    expect(errors('bearer', 'missing_token', 401)).toBe(1);
    expect(errors('bearer', 'invalid_token', 401)).toBe(1);
    expect(errors('bearer', 'insufficient_scope', 403)).toBe(1);
    const allErrors = after.labelSets('oauth_errors_total').reduce((sum, labels) => sum + moved(before, after, 'oauth_errors_total', labels), 0);
    expect(allErrors).toBe(11);
    expect(moved(before, after, 'oauth_token_request_duration_seconds_count', { grant_type: 'client_credentials', outcome: 'error' })).toBe(2);
    expect(moved(before, after, 'oauth_token_request_duration_seconds_count', { grant_type: 'unknown', outcome: 'error' })).toBe(1);
    expect(moved(before, after, 'oauth_bearer_check_duration_seconds_count', { outcome: 'error' })).toBe(3);
    expect(moved(before, after, 'oauth_bearer_check_duration_seconds_count', { outcome: 'success' })).toBe(3);
  });

  it('rate-limit refusals count once each, by limit', async () => {
    const { app, credentialsClient, scrape } = await createMetricsApp({ clientAuthRateLimit: { max: 2 } });
    const wrongSecret = { clientId: credentialsClient.clientId, clientSecret: 'wrong' };
    const before = await scrape();
    for (let i = 0; i < 2; i += 1) expect((await clientCredentials(app, wrongSecret)).status).toBe(401);
    for (let i = 0; i < 3; i += 1) expect((await clientCredentials(app, wrongSecret)).status).toBe(429);
    const after = await scrape();
    expect(moved(before, after, 'oauth_rate_limit_hits_total', { limit: 'client_authentication' })).toBe(3);
    expect(moved(before, after, 'oauth_rate_limit_hits_total', { limit: 'login' })).toBe(0);
    expect(moved(before, after, 'oauth_errors_total', { endpoint: 'token', error: 'temporarily_unavailable', status: '429' })).toBe(3);
  });

  it('store calls are timed by part, method and outcome; revocations.mark is untouched, so cached bearer checks skip the store', async () => {
    const { app, credentialsClient, scrape } = await createMetricsApp();
    const before = await scrape();
    const token = await clientCredentials(app, credentialsClient);
    expect(token.status).toBe(200);
    for (let i = 0; i < 4; i += 1) {
      expect((await request(app).get('/api/v1/me').set('Authorization', `Bearer ${token.body.access_token as string}`)).status).toBe(200);
    }
    const after = await scrape();
    const calls = (part: string, method: string) => moved(before, after, 'oauth_store_call_duration_seconds_count', { part, method, outcome: 'ok' });
    expect(calls('clients', 'findClient')).toBe(1);
    expect(calls('tokens', 'saveTokens')).toBe(1);
    // The first bearer check looks the token up; the next three are served by the cache the feed vouches for.
    expect(calls('tokens', 'findAccessToken')).toBe(1);
    expect(after.labelSets('oauth_store_call_duration_seconds_count').some((labels) => labels.part === 'revocations')).toBe(false);
    expect(after.labelSets('oauth_store_errors_total')).toEqual([]);
  });

  it('bearer checks count as cache hits or misses: a lookup is a miss, the cached answers hits, a revocation makes the next check a miss, and a request without a token neither', async () => {
    const { app, credentialsClient, scrape } = await createMetricsApp();
    const token = (await clientCredentials(app, credentialsClient, '', 'envelopes:read')).body.access_token as string;
    const other = (await clientCredentials(app, credentialsClient)).body.access_token as string;
    const before = await scrape();
    const me = (bearer?: string): request.Test => {
      const call = request(app).get('/api/v1/me');
      return bearer === undefined ? call : call.set('Authorization', `Bearer ${bearer}`);
    };
    for (let i = 0; i < 3; i += 1) expect((await me(token)).status).toBe(200);
    // A refusal from the cache (403 insufficient_scope) is a hit too: the memory decided.
    expect((await request(app).get('/api/v1/sign').set('Authorization', `Bearer ${token}`)).status).toBe(403);
    // Revoking another token moves the feed's mark: the cached answer no longer holds, and the store is asked again.
    expect((await request(app).post('/oauth2/revoke').set('Authorization', basic(credentialsClient)).type('form').send({ token: other })).status).toBe(200);
    expect((await me(token)).status).toBe(200);
    expect((await me(other)).status).toBe(401);
    // No token, or one that is not a Bearer credential: decided before any memory or lookup.
    expect((await me()).status).toBe(401);
    expect((await request(app).get('/api/v1/me').set('Authorization', 'Basic eDp5')).status).toBe(401);
    const after = await scrape();
    const cache = (result: string) => moved(before, after, 'oauth_bearer_cache_requests_total', { result });
    expect({ hit: cache('hit'), miss: cache('miss') }).toEqual({ hit: 3, miss: 3 });
    // The store's own count also holds the revocation endpoint's lookup: it cannot tell the bearer cache's misses.
    expect(moved(before, after, 'oauth_store_call_duration_seconds_count', { part: 'tokens', method: 'findAccessToken', outcome: 'ok' })).toBe(4);
    expect(moved(before, after, 'oauth_bearer_check_duration_seconds_count', { outcome: 'success' })
      + moved(before, after, 'oauth_bearer_check_duration_seconds_count', { outcome: 'error' })).toBe(8);
  });

  it('JWTs checked by signature alone count as hits once the verifier remembers them, as misses when it verifies', async () => {
    const { app, credentialsClient, scrape } = await createMetricsApp({ accessTokenFormat: 'jwt' });
    const token = (await clientCredentials(app, credentialsClient)).body.access_token as string;
    const before = await scrape();
    for (let i = 0; i < 3; i += 1) expect((await request(app).get('/api/v1/me').set('Authorization', `Bearer ${token}`)).status).toBe(200);
    const after = await scrape();
    const cache = (result: string) => moved(before, after, 'oauth_bearer_cache_requests_total', { result });
    expect({ hit: cache('hit'), miss: cache('miss') }).toEqual({ hit: 2, miss: 1 });
  });

  it('no label holds a client id, a user id, a token or a secret', async () => {
    const { app, codeClient, credentialsClient, scrape } = await createMetricsApp();
    const token = await clientCredentials(app, credentialsClient);
    await request(app).get('/api/v1/me').set('Authorization', `Bearer ${token.body.access_token as string}`);
    await obtainCode(app, codeClient);
    const { text } = await scrape();
    for (const secret of [credentialsClient.clientId, credentialsClient.clientSecret, codeClient.clientId, 'user-alice', token.body.access_token as string]) {
      expect(text).not.toContain(secret);
    }
  });

  it('a host registry and prefix are used as given, and close() takes the metrics out of it', async () => {
    const registry = new Registry();
    const { app, credentialsClient } = await createMetricsApp({}, createOAuthMetrics({ registry, prefix: 'acme_auth_' }));
    expect((await clientCredentials(app, credentialsClient)).status).toBe(200);
    const scrape = parseScrape(await registry.metrics());
    expect(scrape.value('acme_auth_tokens_issued_total', { grant_type: 'client_credentials', issuer: ISSUER })).toBe(1);
    expect(scrape.labelSets('oauth_tokens_issued_total')).toEqual([]);
    open.pop()!.close();
    expect(await registry.metrics()).not.toContain('acme_auth_');
  });

  it('only the routers observed are counted, and nothing after close()', async () => {
    const observed = await createMetricsApp();
    const other = await createMetricsApp({}, createOAuthMetrics({ registry: new Registry() }));
    const before = await observed.scrape();
    expect((await clientCredentials(other.app, other.credentialsClient)).status).toBe(200);
    expect((await clientCredentials(observed.app, observed.credentialsClient)).status).toBe(200);
    const after = await observed.scrape();
    expect(moved(before, after, 'oauth_tokens_issued_total', { grant_type: 'client_credentials', issuer: ISSUER })).toBe(1);
    expect(moved(before, after, 'oauth_token_request_duration_seconds_count', { grant_type: 'client_credentials', outcome: 'success' })).toBe(1);
    observed.metrics.close();
    expect((await clientCredentials(observed.app, observed.credentialsClient)).status).toBe(200);
    expect(parseScrape(await observed.metrics.registry.metrics()).labelSets('oauth_tokens_issued_total')).toEqual([]);
  });

  it('a bad prefix is refused with a TypeError naming it', () => {
    expect(() => createOAuthMetrics({ prefix: 'oauth-' })).toThrow(/prefix must be a Prometheus metric name prefix/);
    // Colons are reserved for recording rules (prometheus.io/docs/practices/naming): promtool flags every name with one.
    expect(() => createOAuthMetrics({ prefix: 'acme:oauth_' })).toThrow(/prefix must be .*no colon.*"acme:oauth_"/);
  });

  it('buckets are used as given, and ones that are not finite and strictly increasing are refused with a TypeError naming them', async () => {
    const metrics = createOAuthMetrics({ buckets: { storeCall: [0.1, 1] } });
    open.push(metrics);
    await metrics.instrumentStore(createMemoryStore()).clients.findClient('nobody');
    const les = parseScrape(await metrics.registry.metrics()).labelSets('oauth_store_call_duration_seconds_bucket').map((labels) => labels.le);
    expect(les).toEqual(['0.1', '1', '+Inf']);
    // prom-client takes any list: an unsorted one counted 0.3 s as under 0.1 s, a repeated bound exposed the same
    // series twice with a +Inf below it, and Infinity or NaN made an le that histogram_quantile reads as a bucket.
    for (const bad of [[1, 0.1, 0.5], [0.1, 0.1, 1], [0.1, Infinity], [Number.NaN, 1], ['0.1', 1]]) {
      expect(() => createOAuthMetrics({ buckets: { tokenRequest: bad as number[] } })).toThrow(/buckets\.tokenRequest must be finite numbers in strictly increasing order/);
    }
    expect(() => createOAuthMetrics({ buckets: { bearerCheck: 0.1 as unknown as number[] } })).toThrow(/buckets\.bearerCheck must be/);
  });

  it('a histogram whose buckets are given as undefined keeps the default ones', async () => {
    const metrics = createOAuthMetrics({ buckets: { storeCall: undefined } as unknown as { storeCall: number[] } });
    open.push(metrics);
    await metrics.instrumentStore(createMemoryStore()).clients.findClient('nobody');
    expect(parseScrape(await metrics.registry.metrics()).labelSets('oauth_store_call_duration_seconds_bucket')).toHaveLength(16);
  });

  it('the default buckets start at 10 µs for bearer checks and 50 µs for store calls, where a cached check and a SQLite lookup fall', async () => {
    const { app, credentialsClient, scrape } = await createMetricsApp();
    const token = (await clientCredentials(app, credentialsClient)).body.access_token as string;
    expect((await request(app).get('/api/v1/me').set('Authorization', `Bearer ${token}`)).status).toBe(200);
    const after = await scrape();
    const les = (name: string) => after.labelSets(name).filter((labels) => labels.outcome === (name.includes('store') ? 'ok' : 'success')).map((labels) => labels.le);
    // Before, they started at 100 µs and 0.5 ms: most cached checks and SQLite lookups fell in the first bucket.
    expect(les('oauth_bearer_check_duration_seconds_bucket').slice(0, 4)).toEqual(['0.00001', '0.000025', '0.00005', '0.0001']);
    expect(les('oauth_store_call_duration_seconds_bucket').slice(0, 4)).toEqual(['0.00005', '0.0001', '0.00025', '0.0005']);
  });
});
