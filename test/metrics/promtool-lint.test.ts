// Prometheus's own linter over the router's exposition after real traffic: every metric keeps the naming conventions.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import request from 'supertest';
import { afterAll, describe, expect, it } from 'vitest';
import { createMemoryStore } from '../../src/stores/memory/index.js';
import { StoreUnavailableError } from '../../src/stores/store-unavailable-error.js';
import { createOAuthMetrics } from '../../src/metrics/index.js';
import { basic, type TestClient } from '../helpers/app.js';
import { authorizeQuery, obtainCode } from '../helpers/browser-flow.js';
import { meteredApp } from '../helpers/metered-app.js';

// Set by .ci/run (Debian's prometheus package); a machine without it skips this file unless it is set.
const PROMTOOL = process.env.OAUTH_TEST_PROMTOOL ?? '';
if (!PROMTOOL) console.info('promtool lint test skipped: set OAUTH_TEST_PROMTOOL to a promtool binary to run it');

/** `promtool check metrics` over `text` (its stdin); never rejects. Exit 0 and no output: nothing to say. */
function promtoolCheckMetrics(text: string): Promise<{ code: number; output: string }> {
  if (!existsSync(PROMTOOL)) throw new Error(`OAUTH_TEST_PROMTOOL=${PROMTOOL} is not a promtool binary`);
  return new Promise((done) => {
    const child = execFile(PROMTOOL, ['check', 'metrics'], { timeout: 10_000 }, (error, stdout, stderr) => {
      done({ code: error ? (typeof error.code === 'number' ? error.code : -1) : 0, output: `${stdout}${stderr}` });
    });
    child.stdin!.end(text);
  });
}

const metrics = createOAuthMetrics();
afterAll(() => metrics.close());

/** Client ids whose lookup fails, so the store error series (`unavailable`, `error`) and a 503 and a 500 are exposed. */
const STORE_DOWN = 'store-down';
const STORE_BUG = 'store-bug';

describe.skipIf(!PROMTOOL)('promtool check metrics (Prometheus naming conventions)', () => {
  it('promtool flags a counter without _total, so a pass below means something', async () => {
    const bad = await promtoolCheckMetrics('# HELP oauth_bad_count A counter named wrong.\n# TYPE oauth_bad_count counter\noauth_bad_count 1\n');
    expect(bad.code).not.toBe(0);
    expect(bad.output).toContain('oauth_bad_count');
  });

  it('finds nothing in the exposition of a router after every kind of request, every metric with samples', async () => {
    const raw = createMemoryStore();
    // Fails the lookups of two ids the way a backend outage and a store bug do (RFC 6749 §5.2: 503, 500).
    const findClient = raw.clients.findClient.bind(raw.clients);
    Object.assign(raw.clients, {
      findClient: (clientId: string) => {
        if (clientId === STORE_DOWN) return Promise.reject(new StoreUnavailableError('test outage'));
        if (clientId === STORE_BUG) return Promise.reject(new Error('test bug'));
        return findClient(clientId);
      },
    });
    const store = metrics.instrumentStore(raw);
    const { app, register } = meteredApp(store, metrics, { clientAuthRateLimit: { max: 2 } });
    const codeClient = await register('authorization_code');
    const credentialsClient = await register('client_credentials');
    // Credentials from before the legacy issuer's cut-off, which it still serves.
    const legacyClient = await register('client_credentials', new Date('2020-06-01T00:00:00Z'));
    const token = (client: TestClient, body: Record<string, string>, prefix = '') =>
      request(app).post(`${prefix}/oauth2/token`).set('Authorization', basic(client)).type('form').send(body);

    // Tokens of every grant type, at both issuers.
    const issued = await token(credentialsClient, { grant_type: 'client_credentials', scope: 'envelopes:read' });
    expect(issued.status).toBe(200);
    expect((await token(legacyClient, { grant_type: 'client_credentials' }, '/legacy')).status).toBe(200);
    const code = await obtainCode(app, codeClient);
    const exchanged = await token(codeClient, { grant_type: 'authorization_code', code, redirect_uri: 'https://client.example/callback' });
    expect(exchanged.status).toBe(200);
    expect((await token(codeClient, { grant_type: 'refresh_token', refresh_token: exchanged.body.refresh_token as string })).status).toBe(200);
    // Bearer checks that pass and fail, and an error answer from each endpoint.
    const accessToken = issued.body.access_token as string;
    expect((await request(app).get('/api/v1/me').set('Authorization', `Bearer ${accessToken}`)).status).toBe(200);
    expect((await request(app).get('/api/v1/me')).status).toBe(401);
    expect((await request(app).get('/api/v1/me').set('Authorization', 'Bearer not-a-token')).status).toBe(401);
    expect((await request(app).get('/api/v1/sign').set('Authorization', `Bearer ${accessToken}`)).status).toBe(403);
    expect((await token(credentialsClient, { grant_type: 'urn:example:unknown' })).status).toBe(400);
    expect((await request(app).post('/oauth2/introspect').set('Authorization', basic(credentialsClient)).type('form').send({})).status).toBe(400);
    expect((await request(app).get(`/oauth2/authorize?${authorizeQuery(codeClient, { response_type: 'token' })}`)).status).toBe(302);
    expect((await request(app).post('/oauth2/revoke').set('Authorization', basic(credentialsClient)).type('form').send({ token: accessToken })).status).toBe(200);
    // Store failures, then failed client authentications up to the limit and one past it.
    expect((await token({ clientId: STORE_DOWN, clientSecret: 'x' }, { grant_type: 'client_credentials' })).status).toBe(503);
    expect((await token({ clientId: STORE_BUG, clientSecret: 'x' }, { grant_type: 'client_credentials' })).status).toBe(500);
    const wrongSecret = { clientId: credentialsClient.clientId, clientSecret: 'wrong' };
    for (let i = 0; i < 2; i += 1) expect((await token(wrongSecret, { grant_type: 'client_credentials' })).status).toBe(401);
    expect((await token(wrongSecret, { grant_type: 'client_credentials' })).status).toBe(429);

    const scrape = await request(app).get('/metrics');
    expect(scrape.status).toBe(200);
    // A metric nothing above reaches would be linted by name only: drive it here when adding one.
    const families = [...scrape.text.matchAll(/^# TYPE (\S+) /gm)].map((m) => m[1]!);
    expect(families.length).toBeGreaterThanOrEqual(8);
    for (const family of families) expect(scrape.text, `${family} has no sample`).toMatch(new RegExp(`^${family}(_bucket|_sum|_count)?[{ ]`, 'm'));
    expect(scrape.text).toContain('oauth_store_errors_total{part="clients",method="findClient",reason="unavailable"} 1');
    expect(scrape.text).toContain('oauth_store_errors_total{part="clients",method="findClient",reason="error"} 1');

    const lint = await promtoolCheckMetrics(scrape.text);
    expect(lint.output).toBe('');
    expect(lint.code).toBe(0);
  });
});
