// RFC 6819 §4.3.5 (online guessing of client secrets): failed client authentications at the token, revocation
// and introspection endpoints are limited per (client_id, source) and per source, answering 429 with
// Retry-After and an RFC 6749 §5.2 body, and a stranger's failures never lock the real client out.
import { describe, expect, it } from 'vitest';
import request from 'supertest';
import { basic, createTestApp, type TestApp, type TestClient } from '../helpers/app.js';
import { createMemoryStore } from '../../src/stores/memory/index.js';
import type { RateLimitStore, Store } from '../../src/stores/contract.js';
import type { OAuthRouterOptions } from '../../src/options.js';
import { SPEC_HEADERS } from '../helpers/spec-requests.js';
import { hashSecretScrypt } from '../../src/crypto/scrypt-secret.js';
import { registerClient } from '../../src/clients/register-client.js';
import { OAuthEvents } from '../../src/events/oauth-events.js';
import type { OAuthEvent } from '../../src/events/event-types.js';

const ATTACKER = '203.0.113.7';
const CLIENT_HOME = '198.51.100.20';


async function hostBehindProxy(options: Partial<OAuthRouterOptions> = {}, store?: Store): Promise<TestApp> {
  const t = await createTestApp(options, store);
  t.app.set('trust proxy', 'loopback');
  return t;
}

const wrongSecret = (client: TestClient): TestClient => ({ clientId: client.clientId, clientSecret: `${client.clientSecret}x` });

/** POST /oauth2/{endpoint} from `source` (none: the peer address) authenticating as `client` (null: no credentials). */
function post(t: TestApp, endpoint: 'token' | 'revoke' | 'introspect', client: TestClient | null, source?: string): request.Test {
  const req = request(t.app).post(`/oauth2/${endpoint}`).type('form');
  if (source !== undefined) req.set('X-Forwarded-For', source);
  if (client) req.set('Authorization', basic(client));
  return req.send(endpoint === 'token' ? { grant_type: 'client_credentials' } : { token: 'not-a-token' });
}

async function statuses(send: () => request.Test, times: number): Promise<number[]> {
  const seen: number[] = [];
  for (let i = 0; i < times; i += 1) seen.push((await send()).status);
  return seen;
}

/** A host whose client_credentials integration has an imported secret: its hash is scrypt, a slow check. */
async function hostWithImportedSecret(options: Partial<OAuthRouterOptions>) {
  const seen: OAuthEvent[] = [];
  const events = new OAuthEvents();
  events.on('event', (event) => seen.push(event));
  const t = await hostBehindProxy({ ...options, events });
  const imported: TestClient = { clientId: t.credentialsClient.clientId, clientSecret: 'imported-partner-secret-2019' };
  await t.store.clients.updateClient!(imported.clientId, { clientSecretHash: await hashSecretScrypt(imported.clientSecret) });
  return { t, imported, seen };
}

describe('client authentication rate limit, slow (imported) secrets: what a burst costs', () => {
  it('a burst of wrong secrets sent at once from one source runs max secret checks, not one each: the rest get 429 unchecked', async () => {
    const { t, imported, seen } = await hostWithImportedSecret({ clientAuthRateLimit: { max: 4 } });
    const burst = await Promise.all(Array.from({ length: 40 }, (_, i) =>
      post(t, 'token', { clientId: imported.clientId, clientSecret: `guess-${i}` }, ATTACKER)));
    const counts = (kind: string) => seen.filter((event) => event.type === kind).length;
    expect(burst.map((res) => res.status).sort()).toEqual([...Array(4).fill(401), ...Array(36).fill(429)]);
    expect(counts('client.authentication_failed'), 'checks that ran and failed').toBe(4);
    expect(counts('rate_limit.hit')).toBe(36);
  });

  it('maxPerSource bounds the checks across integrations the same way', async () => {
    const { t, imported, seen } = await hostWithImportedSecret({ clientAuthRateLimit: { max: 50, maxPerSource: 3 } });
    const other = t.codeClient.clientId;
    await t.store.clients.updateClient!(other, { clientSecretHash: await hashSecretScrypt('another-imported-secret') });
    const burst = await Promise.all(Array.from({ length: 20 }, (_, i) =>
      post(t, 'token', { clientId: i % 2 === 0 ? imported.clientId : other, clientSecret: `guess-${i}` }, ATTACKER)));
    expect(burst.filter((res) => res.status === 401)).toHaveLength(3);
    expect(seen.filter((event) => event.type === 'client.authentication_failed')).toHaveLength(3);
  });

  it("a partner's burst with its correct imported secret all succeeds: one check, the others join it or find it remembered", async () => {
    const { t, imported } = await hostWithImportedSecret({ clientAuthRateLimit: { max: 2 } });
    const burst = await Promise.all(Array.from({ length: 30 }, () => post(t, 'token', imported, CLIENT_HOME)));
    expect(burst.map((res) => res.status)).toEqual(Array(30).fill(200));
  });

  it("an attacker's burst from one source leaves the partner's correct secret working from its own", async () => {
    const { t, imported } = await hostWithImportedSecret({ clientAuthRateLimit: { max: 3 } });
    const attack = Promise.all(Array.from({ length: 30 }, (_, i) =>
      post(t, 'token', { clientId: imported.clientId, clientSecret: `guess-${i}` }, ATTACKER)));
    const partner = await post(t, 'token', imported, CLIENT_HOME);
    expect(partner.status).toBe(200);
    expect((await attack).filter((res) => res.status === 401)).toHaveLength(3);
  });
});

describe('client authentication rate limit and a Basic header read two ways (SPEC §2 as sent, RFC 6749 §2.3.1 form-decoded)', () => {
  /** The Basic header as SPEC §2 writes it: the Base64 of client_id:client_secret, nothing encoded. */
  const literal = (clientId: string, secret: string) => `Basic ${Buffer.from(`${clientId}:${secret}`).toString('base64')}`;
  const sendAs = (t: TestApp, header: string, source: string) => request(t.app).post('/oauth2/token').type('form')
    .set('X-Forwarded-For', source).set('Authorization', header).send({ grant_type: 'client_credentials' });

  it('a partner whose imported (scrypt) secret holds + and %, sent as it is, is not counted as failing by its own successes', async () => {
    const { t, imported } = await hostWithImportedSecret({ clientAuthRateLimit: { max: 3, maxPerSource: 3 } });
    const secret = 's3cret+from%2019/ok=';
    await t.store.clients.updateClient!(imported.clientId, { clientSecretHash: await hashSecretScrypt(secret) });
    // Each request's form-decoded reading fails its scrypt check first; only the request's verdict may count.
    expect(await statuses(() => sendAs(t, literal(imported.clientId, secret), CLIENT_HOME), 8)).toEqual(Array(8).fill(200));
  });

  it('a failure of both readings is counted and reported once, against the id an integration has', async () => {
    const seen: OAuthEvent[] = [];
    const events = new OAuthEvents();
    events.on('event', (event) => seen.push(event));
    const t = await hostBehindProxy({ clientAuthRateLimit: { max: 2 }, events });
    // Only the id as sent exists; its form-decoded reading, "solo x", names no integration.
    const { client, clientSecret } = await registerClient(t.store, { name: 'Solo', flow: 'client_credentials', clientId: 'solo+x' });
    expect(await statuses(() => sendAs(t, literal('solo+x', 'wrong+guess'), ATTACKER), 2)).toEqual([401, 401]);
    const failed = seen.filter((event) => event.type === 'client.authentication_failed');
    expect(failed.map((event) => (event as { clientId: string | null }).clientId)).toEqual(['solo+x', 'solo+x']);
    // Counted against solo+x: from that source even its right secret now waits out the window.
    expect((await sendAs(t, literal(client.clientId, clientSecret), ATTACKER)).status).toBe(429);
    expect((await sendAs(t, literal(client.clientId, clientSecret), CLIENT_HOME)).status).toBe(200);
  });
});

describe('client authentication rate limit', () => {
  it('after max failures for one client_id a source gets 429 with Retry-After, an RFC 6749 §5.2 body and the SPEC §4.2 headers', async () => {
    const t = await createTestApp({ clientAuthRateLimit: { max: 3, windowSeconds: 120 } });
    const wrong = wrongSecret(t.credentialsClient);
    expect(await statuses(() => post(t, 'token', wrong), 3)).toEqual([401, 401, 401]);
    const limited = await post(t, 'token', wrong);
    expect(limited.status).toBe(429);
    expect(limited.headers).toMatchObject(SPEC_HEADERS);
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    expect(Number(limited.headers['retry-after'])).toBeLessThanOrEqual(120);
    expect(limited.headers['www-authenticate']).toBeUndefined();
    expect(limited.body).toEqual({ error: 'temporarily_unavailable', error_description: expect.stringMatching(/^[\x20-\x21\x23-\x5B\x5D-\x7E]+$/) });
  });

  it("a stranger's wrong secrets for a client_id do not stop the real client's correct requests from its own source", async () => {
    const t = await hostBehindProxy({ clientAuthRateLimit: { max: 3 } });
    const wrong = wrongSecret(t.credentialsClient);
    const stranger = await statuses(() => post(t, 'token', wrong, ATTACKER), 40);
    expect(stranger).toEqual([401, 401, 401, ...Array(37).fill(429)]);
    expect(await statuses(() => post(t, 'token', t.credentialsClient, CLIENT_HOME), 5)).toEqual(Array(5).fill(200));
    expect((await post(t, 'revoke', t.credentialsClient, CLIENT_HOME)).status).toBe(200);
    expect((await post(t, 'introspect', t.credentialsClient, CLIENT_HOME)).status).toBe(200);
  });

  it('the source that failed is refused even with the right secret until the window ends', async () => {
    const t = await hostBehindProxy({ clientAuthRateLimit: { max: 2 } });
    await statuses(() => post(t, 'token', wrongSecret(t.credentialsClient), ATTACKER), 2);
    expect((await post(t, 'token', t.credentialsClient, ATTACKER)).status).toBe(429);
  });

  it('failures at the revocation and introspection endpoints count with those at the token endpoint', async () => {
    const t = await createTestApp({ clientAuthRateLimit: { max: 3 } });
    const wrong = wrongSecret(t.codeClient);
    expect((await post(t, 'revoke', wrong)).status).toBe(401);
    expect((await post(t, 'introspect', wrong)).status).toBe(401);
    expect((await post(t, 'token', wrong)).status).toBe(401);
    const limited = await post(t, 'introspect', wrong);
    expect(limited.status).toBe(429);
    expect(limited.body.error).toBe('temporarily_unavailable');
    expect(limited.headers['retry-after']).toMatch(/^\d+$/);
  });

  it('past maxPerSource failures across client ids, the source is refused for every client_id', async () => {
    const t = await hostBehindProxy({ clientAuthRateLimit: { max: 3, maxPerSource: 5 } });
    const guesses: number[] = [];
    for (let i = 0; i < 6; i += 1) guesses.push((await post(t, 'token', { clientId: `guess-${i}`, clientSecret: 'x' }, ATTACKER)).status);
    expect(guesses).toEqual([401, 401, 401, 401, 401, 429]);
    expect((await post(t, 'token', t.credentialsClient, ATTACKER)).status).toBe(429);
    expect((await post(t, 'token', t.credentialsClient, CLIENT_HOME)).status).toBe(200);
  });

  it('requests without credentials, which name no client, are not counted', async () => {
    const t = await createTestApp({ clientAuthRateLimit: { max: 2, maxPerSource: 2 } });
    expect(new Set(await statuses(() => post(t, 'token', null), 10))).toEqual(new Set([401]));
    expect((await post(t, 'token', t.credentialsClient)).status).toBe(200);
  });

  it('successful authentications read and write no counter', async () => {
    const store = createMemoryStore();
    const calls: string[] = [];
    const counted: RateLimitStore = Object.fromEntries(Object.entries(store.rateLimits).map(([name, method]) =>
      [name, (...args: unknown[]) => { calls.push(name); return (method as (...a: unknown[]) => unknown)(...args); }])) as unknown as RateLimitStore;
    const t = await createTestApp({}, { ...store, rateLimits: counted });
    expect(await statuses(() => post(t, 'token', t.credentialsClient), 5)).toEqual(Array(5).fill(200));
    expect(calls).toEqual([]);
    expect((await post(t, 'token', wrongSecret(t.credentialsClient))).status).toBe(401);
    expect(calls.sort()).toEqual(['hit', 'hit']);
  });

  it('two routers on one store count together: past the limit reached on one, the other answers 429', async () => {
    const store = createMemoryStore();
    const one = await createTestApp({ clientAuthRateLimit: { max: 3 } }, store);
    const two = await createTestApp({ clientAuthRateLimit: { max: 3 } }, store);
    const wrong = wrongSecret(one.credentialsClient);
    expect(await statuses(() => post(one, 'token', wrong), 3)).toEqual([401, 401, 401]);
    expect((await post(two, 'token', wrong)).status).toBe(429);
  });

  it('allows 20 failures per client_id and source by default', async () => {
    const t = await createTestApp();
    expect(await statuses(() => post(t, 'token', wrongSecret(t.credentialsClient)), 21)).toEqual([...Array(20).fill(401), 429]);
  });

  it('can be turned off with clientAuthRateLimit: false', async () => {
    const t = await createTestApp({ clientAuthRateLimit: false });
    expect(new Set(await statuses(() => post(t, 'token', wrongSecret(t.credentialsClient)), 25))).toEqual(new Set([401]));
  });

  it('rejects a bad option at start-up, naming the key', async () => {
    await expect(createTestApp({ clientAuthRateLimit: { max: -1 } })).rejects.toThrow('"clientAuthRateLimit.max"');
    await expect(createTestApp({ clientAuthRateLimit: { limit: 5 } as never })).rejects.toThrow('"clientAuthRateLimit.limit"');
    await expect(createTestApp({ clientAuthRateLimit: 'strict' as never })).rejects.toThrow('"clientAuthRateLimit"');
  });
});
