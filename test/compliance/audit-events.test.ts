// RFC 9700 §4.14 and RFC 6819 §5.1.4.1.1: every security-relevant outcome over HTTP is reported once as a typed
// audit event with ids, the issuer and the source address, and no event ever holds a secret, code or token.
import express from 'express';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { createOAuthRouter } from '../../src/router.js';
import { createMemoryStore } from '../../src/stores/memory/index.js';
import { registerClient } from '../../src/clients/register-client.js';
import { OAuthEvents } from '../../src/events/oauth-events.js';
import type { OAuthEvent, OAuthEventOf, OAuthEventType } from '../../src/events/event-types.js';
import type { OAuthRouterOptions } from '../../src/options.js';
import { StoreUnavailableError } from '../../src/stores/store-unavailable-error.js';
import type { OAuthRouter } from '../../src/types.js';
import type { Store, TokenEndpointAuthMethod } from '../../src/stores/contract.js';
import { basic, createTestUserAuth, ISSUER, LEGACY_ISSUER, REDIRECT_URI, USER, type TestClient } from '../helpers/app.js';
import { authorizeQuery, hiddenField, signIn } from '../helpers/browser-flow.js';

const SOURCE = '203.0.113.9';

interface Harness {
  readonly app: express.Express;
  readonly oauth: OAuthRouter;
  readonly store: Store;
  readonly codeClient: TestClient;
  readonly credentialsClient: TestClient;
  /** Every event heard on `'event'`, in order. */
  readonly seen: OAuthEvent[];
  /** What the logger received. */
  readonly logged: string[];
  /** Every secret, code, token and password the test saw: no event may contain one. */
  readonly secrets: Set<string>;
  /** Users the directory no longer knows (`findUser` answers null). */
  readonly deletedUsers: Set<string>;
}

async function harness(options: Partial<OAuthRouterOptions> = {}): Promise<Harness> {
  const store = createMemoryStore();
  const events = new OAuthEvents();
  const seen: OAuthEvent[] = [];
  events.on('event', (event) => seen.push(event));
  const logged: string[] = [];
  const deletedUsers = new Set<string>();
  const oauth = createOAuthRouter(store, createTestUserAuth(deletedUsers), {
    issuer: ISSUER,
    legacy: { issuer: LEGACY_ISSUER },
    session: { secret: 'test-session-secret-0123456789' },
    logger: { warn: (m) => logged.push(m), error: (m) => logged.push(m) },
    events,
    ...options,
  });
  const app = express();
  // Every request says it comes from SOURCE through a proxy on loopback, so `ip` is known exactly.
  app.set('trust proxy', 'loopback');
  app.use((req, _res, next) => {
    req.headers['x-forwarded-for'] = SOURCE;
    next();
  });
  app.use(oauth.router);
  const secrets = new Set<string>([USER.password, 'test-session-secret-0123456789']);
  const register = async (flow: 'authorization_code' | 'client_credentials', method?: TokenEndpointAuthMethod): Promise<TestClient> => {
    const { client, clientSecret } = await registerClient(store, {
      name: flow, flow, redirectUris: flow === 'authorization_code' ? [REDIRECT_URI] : [], allowedScopes: ['envelopes:read'],
      ...(method ? { tokenEndpointAuthMethod: method } : {}),
    });
    secrets.add(clientSecret);
    return { clientId: client.clientId, clientSecret };
  };
  return { app, oauth, store, codeClient: await register('authorization_code'), credentialsClient: await register('client_credentials'), seen, logged, secrets, deletedUsers };
}

/** The events of one type heard so far. */
function eventsOf<T extends OAuthEventType>(h: Harness, type: T): OAuthEventOf<T>[] {
  return h.seen.filter((event): event is OAuthEventOf<T> => event.type === type);
}

/** What every HTTP event carries. */
const fromHttp = { time: expect.any(Date), issuer: ISSUER, ip: SOURCE };

/** No event holds any secret, code, token or password the test saw, nor the start of one. */
function expectNoSecrets(h: Harness): void {
  expect(h.seen.length).toBeGreaterThan(0);
  for (const event of h.seen) {
    const text = JSON.stringify(event);
    for (const secret of h.secrets) {
      expect(text, `${event.type} holds a secret`).not.toContain(secret);
      expect(text, `${event.type} holds part of a secret`).not.toContain(secret.slice(0, 16));
    }
  }
}

/** Signs in and approves; returns the cookie-keeping agent and the code. */
async function browse(h: Harness, client: TestClient = h.codeClient): Promise<{ agent: request.Agent; code: string }> {
  const agent = request.agent(h.app);
  const page = await signIn(agent, '', authorizeQuery(client, { scope: 'envelopes:read' }));
  let location: string;
  if (page.status === 302) location = page.headers.location!;
  else {
    const decided = await agent.post('/oauth2/consent').type('form').send({
      csrf_token: hiddenField(page.text, 'csrf_token'), request_id: hiddenField(page.text, 'request_id'), decision: 'allow',
    });
    expect(decided.status).toBe(303);
    location = decided.headers.location!;
  }
  const code = new URL(location).searchParams.get('code')!;
  expect(code).toBeTruthy();
  h.secrets.add(code);
  return { agent, code };
}

async function token(h: Harness, client: TestClient, form: Record<string, string>): Promise<request.Response> {
  const res = await request(h.app).post('/oauth2/token').set('Authorization', basic(client)).type('form').send(form);
  for (const key of ['access_token', 'refresh_token'] as const) if (typeof res.body[key] === 'string') h.secrets.add(res.body[key] as string);
  return res;
}

async function exchange(h: Harness, code: string): Promise<request.Response> {
  return token(h, h.codeClient, { grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI });
}

describe('audit events', () => {
  it('an authorization code flow reports login.succeeded, consent.granted and token.issued (authorization_code) with ids, issuer and source', async () => {
    const h = await harness();
    const { code } = await browse(h);
    const res = await exchange(h, code);
    expect(res.status).toBe(200);
    expect(h.seen.map((e) => e.type)).toEqual(['login.succeeded', 'consent.granted', 'token.issued']);
    expect(eventsOf(h, 'login.succeeded')[0]).toEqual({ type: 'login.succeeded', ...fromHttp, userId: USER.id, clientId: h.codeClient.clientId });
    expect(eventsOf(h, 'consent.granted')[0]).toEqual({
      type: 'consent.granted', ...fromHttp, userId: USER.id, clientId: h.codeClient.clientId, scope: ['envelopes:read'],
    });
    expect(eventsOf(h, 'token.issued')[0]).toEqual({
      type: 'token.issued', ...fromHttp, grantType: 'authorization_code', clientId: h.codeClient.clientId, userId: USER.id,
      grantId: expect.any(String), scope: ['envelopes:read'], refreshToken: true,
    });
    expectNoSecrets(h);
  });

  it('a refresh reports token.refreshed for the same grant, without a new refresh token', async () => {
    const h = await harness();
    const issued = await exchange(h, (await browse(h)).code);
    const res = await token(h, h.codeClient, { grant_type: 'refresh_token', refresh_token: issued.body.refresh_token as string });
    expect(res.status).toBe(200);
    const grantId = eventsOf(h, 'token.issued')[0]!.grantId;
    expect(eventsOf(h, 'token.refreshed')).toEqual([{
      type: 'token.refreshed', ...fromHttp, grantType: 'refresh_token', clientId: h.codeClient.clientId, userId: USER.id,
      grantId, scope: ['envelopes:read'], refreshToken: false,
    }]);
    expectNoSecrets(h);
  });

  it('a client_credentials grant reports token.issued without a user or refresh token', async () => {
    const h = await harness();
    expect((await token(h, h.credentialsClient, { grant_type: 'client_credentials' })).status).toBe(200);
    expect(h.seen).toEqual([{
      type: 'token.issued', ...fromHttp, grantType: 'client_credentials', clientId: h.credentialsClient.clientId, userId: null,
      grantId: expect.any(String), scope: ['envelopes:read'], refreshToken: false,
    }]);
    expectNoSecrets(h);
  });

  it('an event names the base address the request came in at: the legacy issuer for a legacy integration', async () => {
    const h = await harness();
    const legacy = await registerClient(h.store, { name: 'old', flow: 'client_credentials', credentialsIssuedAt: new Date('2020-01-01T00:00:00Z') });
    h.secrets.add(legacy.clientSecret);
    const res = await request(h.app).post('/legacy/oauth2/token').set('Authorization', basic({ clientId: legacy.client.clientId, clientSecret: legacy.clientSecret }))
      .type('form').send({ grant_type: 'client_credentials' });
    expect(res.status).toBe(200);
    h.secrets.add(res.body.access_token as string);
    expect(h.seen).toEqual([expect.objectContaining({ type: 'token.issued', issuer: LEGACY_ISSUER, clientId: legacy.client.clientId })]);
    expectNoSecrets(h);
  });

  it('the revocation endpoint reports token.revoked: extent token for an access token, grant for a refresh token, nothing for an unknown token', async () => {
    const h = await harness();
    const issued = await exchange(h, (await browse(h)).code);
    const grantId = eventsOf(h, 'token.issued')[0]!.grantId;
    const revoke = (value: string) => request(h.app).post('/oauth2/revoke').set('Authorization', basic(h.codeClient)).type('form').send({ token: value });
    expect((await revoke(issued.body.access_token as string)).status).toBe(200);
    expect((await revoke(issued.body.refresh_token as string)).status).toBe(200);
    expect((await revoke('no-such-token-at-all')).status).toBe(200);
    const common = { type: 'token.revoked', ...fromHttp, cause: 'revocation_endpoint', clientId: h.codeClient.clientId, userId: USER.id, grantId };
    expect(eventsOf(h, 'token.revoked')).toEqual([{ ...common, extent: 'token' }, { ...common, extent: 'grant' }]);
    expectNoSecrets(h);
  });

  it('a replayed code reports code.replayed and token.revoked (code_replay) for its grant and user, once', async () => {
    const h = await harness();
    const { code } = await browse(h);
    expect((await exchange(h, code)).status).toBe(200);
    const replay = await exchange(h, code);
    expect(replay.status).toBe(400);
    expect(replay.body.error).toBe('invalid_grant');
    const grantId = eventsOf(h, 'token.issued')[0]!.grantId;
    expect(eventsOf(h, 'code.replayed')).toEqual([{ type: 'code.replayed', ...fromHttp, clientId: h.codeClient.clientId, grantId }]);
    expect(eventsOf(h, 'token.revoked')).toEqual([{
      type: 'token.revoked', ...fromHttp, cause: 'code_replay', extent: 'grant', clientId: h.codeClient.clientId, userId: USER.id, grantId,
    }]);
    expectNoSecrets(h);
  });

  it('a replayed code is reported even when revoking its grant fails (503): code.replayed, and no token.revoked', async () => {
    const h = await harness();
    const { code } = await browse(h);
    expect((await exchange(h, code)).status).toBe(200);
    const revokeGrant = h.store.tokens.revokeGrant.bind(h.store.tokens);
    h.store.tokens.revokeGrant = () => Promise.reject(new StoreUnavailableError('store down for this test'));
    const replay = await exchange(h, code);
    expect(replay.status).toBe(503);
    const grantId = eventsOf(h, 'token.issued')[0]!.grantId;
    // The replay is the attack signal (RFC 9700 §4.14): an outage of the revocation must not hide it.
    expect(eventsOf(h, 'code.replayed')).toEqual([{ type: 'code.replayed', ...fromHttp, clientId: h.codeClient.clientId, grantId }]);
    expect(eventsOf(h, 'token.revoked')).toEqual([]);
    h.store.tokens.revokeGrant = revokeGrant;
    expect((await exchange(h, code)).body.error).toBe('invalid_grant');
    expect(eventsOf(h, 'code.replayed')).toHaveLength(2);
    expect(eventsOf(h, 'token.revoked').map((e) => e.cause)).toEqual(['code_replay']);
    expectNoSecrets(h);
  });

  it('a used code presented by another integration: code.replayed names the presenter, token.revoked the code\'s integration and user', async () => {
    const h = await harness();
    const { code } = await browse(h);
    expect((await exchange(h, code)).status).toBe(200);
    const { client, clientSecret } = await registerClient(h.store, {
      name: 'other', flow: 'authorization_code', redirectUris: [REDIRECT_URI], allowedScopes: ['envelopes:read'],
    });
    h.secrets.add(clientSecret);
    const other = { clientId: client.clientId, clientSecret };
    const replay = await token(h, other, { grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI });
    expect(replay.body.error).toBe('invalid_grant');
    const grantId = eventsOf(h, 'token.issued')[0]!.grantId;
    expect(eventsOf(h, 'code.replayed')).toEqual([{ type: 'code.replayed', ...fromHttp, clientId: other.clientId, grantId }]);
    expect(eventsOf(h, 'token.revoked')).toEqual([{
      type: 'token.revoked', ...fromHttp, cause: 'code_replay', extent: 'grant', clientId: h.codeClient.clientId, userId: USER.id, grantId,
    }]);
    expectNoSecrets(h);
  });

  it('a replay answered without the code\'s user (a store may leave userId out) reports token.revoked with userId null', async () => {
    const h = await harness();
    const consumeCode = h.store.codes.consumeCode.bind(h.store.codes);
    h.store.codes.consumeCode = async (codeHash) => {
      const result = await consumeCode(codeHash);
      return result.kind === 'replayed' ? { kind: 'replayed', grantId: result.grantId } : result;
    };
    const { code } = await browse(h);
    expect((await exchange(h, code)).status).toBe(200);
    expect((await exchange(h, code)).body.error).toBe('invalid_grant');
    expect(eventsOf(h, 'token.revoked')).toEqual([expect.objectContaining({ cause: 'code_replay', userId: null })]);
  });

  it('a code whose user is gone reports token.revoked (user_deleted) for its grant instead of token.issued', async () => {
    const h = await harness();
    const { code } = await browse(h);
    h.deletedUsers.add(USER.id);
    expect((await exchange(h, code)).status).toBe(400);
    expect(eventsOf(h, 'token.issued')).toEqual([]);
    expect(eventsOf(h, 'token.revoked')).toEqual([{
      type: 'token.revoked', ...fromHttp, cause: 'user_deleted', extent: 'grant', clientId: h.codeClient.clientId, userId: USER.id,
      grantId: expect.any(String),
    }]);
    expectNoSecrets(h);
  });

  it('a failed client authentication reports client.authentication_failed with its reason at each endpoint, while every answer stays a uniform 401 invalid_client', async () => {
    const h = await harness({ clientAuthRateLimit: false });
    const legacy = await registerClient(h.store, { name: 'old', flow: 'client_credentials', credentialsIssuedAt: new Date('2020-01-01T00:00:00Z') });
    h.secrets.add(legacy.clientSecret);
    const postOnly = await registerClient(h.store, { name: 'post', flow: 'client_credentials', tokenEndpointAuthMethod: 'client_secret_post' });
    h.secrets.add(postOnly.clientSecret);
    const disabled = await registerClient(h.store, { name: 'off', flow: 'client_credentials' });
    h.secrets.add(disabled.clientSecret);
    await h.store.clients.updateClient!(disabled.client.clientId, { disabled: true });
    const cc = h.credentialsClient;
    const wrong = `${cc.clientSecret.slice(0, -4)}AAAA`;
    h.secrets.add(wrong);
    const cases: Array<[string, Record<string, string>, Record<string, string>, string | null, string | null]> = [
      ['unknown_client', { Authorization: basic({ clientId: 'nobody', clientSecret: wrong }) }, {}, null, 'client_secret_basic'],
      ['wrong_secret', { Authorization: basic({ clientId: cc.clientId, clientSecret: wrong }) }, {}, cc.clientId, 'client_secret_basic'],
      ['disabled', { Authorization: basic({ clientId: disabled.client.clientId, clientSecret: disabled.clientSecret }) }, {}, disabled.client.clientId, 'client_secret_basic'],
      ['method_not_allowed', { Authorization: basic({ clientId: postOnly.client.clientId, clientSecret: postOnly.clientSecret }) }, {}, postOnly.client.clientId, 'client_secret_basic'],
      ['no_credentials', {}, { client_id: cc.clientId }, null, null],
      ['malformed_credentials', { Authorization: `Basic ${Buffer.from(`${cc.clientId}`).toString('base64')}` }, {}, null, 'client_secret_basic'],
      ['wrong_issuer', {}, { client_id: legacy.client.clientId, client_secret: legacy.clientSecret }, legacy.client.clientId, 'client_secret_post'],
    ];
    const endpoints = [['token', 'token', { grant_type: 'client_credentials' }], ['revoke', 'revocation', { token: 'x' }], ['introspect', 'introspection', { token: 'x' }]] as const;
    for (const [path, endpoint, form] of endpoints) {
      for (const [reason, headers, fields, clientId, method] of cases) {
        const before = h.seen.length;
        const res = await request(h.app).post(`/oauth2/${path}`).set(headers).type('form').send({ ...form, ...fields });
        expect(res.status, `${path} ${reason}`).toBe(401);
        expect(res.body.error).toBe('invalid_client');
        expect(JSON.stringify(res.body)).not.toContain(reason);
        expect(h.seen.slice(before), `${path} ${reason}`).toEqual([{
          type: 'client.authentication_failed', ...fromHttp, endpoint, clientId, method, reason,
        }]);
      }
    }
    // The three failures an outsider can produce (unknown id, wrong secret, disabled) get the very same answer.
    const bodies = await Promise.all(cases.slice(0, 3).map(([, headers]) =>
      request(h.app).post('/oauth2/token').set(headers).type('form').send({ grant_type: 'client_credentials' }).then((r) => JSON.stringify(r.body))));
    expect(new Set(bodies).size).toBe(1);
    expectNoSecrets(h);
  });

  it('a secret presented as the client_id (id and secret swapped) is in no event: an id that names no integration is not reported', async () => {
    const h = await harness({ clientAuthRateLimit: { max: 2 } });
    const cc = h.credentialsClient;
    const swapped = { clientId: cc.clientSecret, clientSecret: cc.clientId };
    const asBasic = () => request(h.app).post('/oauth2/token').set('Authorization', basic(swapped)).type('form').send({ grant_type: 'client_credentials' });
    const asForm = () => request(h.app).post('/oauth2/token').type('form')
      .send({ grant_type: 'client_credentials', client_id: swapped.clientId, client_secret: swapped.clientSecret });
    const withoutSecret = () => request(h.app).post('/oauth2/token').type('form').send({ grant_type: 'client_credentials', client_id: cc.clientSecret });
    expect([(await asBasic()).status, (await asForm()).status, (await asBasic()).status, (await withoutSecret()).status]).toEqual([401, 401, 429, 401]);
    expect(h.seen.map((e) => e.type)).toEqual(['client.authentication_failed', 'client.authentication_failed', 'rate_limit.hit', 'client.authentication_failed']);
    expect(JSON.stringify(h.seen)).not.toContain(cc.clientSecret);
    expectNoSecrets(h);
  });

  it('clientAuthRateLimit refusing a source reports rate_limit.hit (client_authentication) after the failures it counted', async () => {
    const h = await harness({ clientAuthRateLimit: { max: 2 } });
    const wrong = { clientId: h.credentialsClient.clientId, clientSecret: `${h.credentialsClient.clientSecret}x` };
    h.secrets.add(wrong.clientSecret);
    const statuses: number[] = [];
    for (let i = 0; i < 3; i += 1) {
      statuses.push((await request(h.app).post('/oauth2/token').set('Authorization', basic(wrong)).type('form').send({ grant_type: 'client_credentials' })).status);
    }
    expect(statuses).toEqual([401, 401, 429]);
    expect(h.seen.map((e) => e.type)).toEqual(['client.authentication_failed', 'client.authentication_failed', 'rate_limit.hit']);
    expect(eventsOf(h, 'rate_limit.hit')).toEqual([{ type: 'rate_limit.hit', ...fromHttp, limit: 'client_authentication', clientId: null }]);
    expectNoSecrets(h);
  });

  it('a refused sign-in reports login.failed (bad_credentials, csrf) without the username, and loginRateLimit adds rate_limit.hit', async () => {
    const h = await harness({ loginRateLimit: { max: 1 } });
    const agent = request.agent(h.app);
    const page = await agent.get(`/oauth2/authorize?${authorizeQuery(h.codeClient)}`);
    const form = { csrf_token: hiddenField(page.text, 'csrf_token'), request_id: hiddenField(page.text, 'request_id'), username: USER.username };
    const typedPassword = 'my-old-password-typed-wrongly';
    h.secrets.add(typedPassword);
    expect((await agent.post('/oauth2/login').type('form').send({ ...form, password: typedPassword })).status).toBe(400);
    expect((await agent.post('/oauth2/login').type('form').send({ ...form, password: USER.password })).status).toBe(429);
    expect((await agent.post('/oauth2/login').type('form').send({ ...form, csrf_token: 'forged', password: USER.password })).status).toBe(403);
    const clientId = h.codeClient.clientId;
    expect(h.seen).toEqual([
      { type: 'login.failed', ...fromHttp, reason: 'bad_credentials', clientId },
      { type: 'login.failed', ...fromHttp, reason: 'rate_limited', clientId },
      { type: 'rate_limit.hit', ...fromHttp, limit: 'login', clientId },
      { type: 'login.failed', ...fromHttp, reason: 'csrf', clientId: null },
    ]);
    h.secrets.add(USER.username);
    expectNoSecrets(h);
  });

  it('withdrawing consent on the consents page reports consent.withdrawn and token.revoked (consent_withdrawn, extent user)', async () => {
    const h = await harness();
    const { agent, code } = await browse(h);
    await exchange(h, code);
    const page = await agent.get('/oauth2/consents');
    expect(page.status).toBe(200);
    const withdrawn = await agent.post('/oauth2/consents/withdraw').type('form')
      .send({ csrf_token: hiddenField(page.text, 'csrf_token'), client_id: h.codeClient.clientId });
    expect(withdrawn.status).toBe(303);
    const ids = { clientId: h.codeClient.clientId, userId: USER.id };
    expect(h.seen.slice(-2)).toEqual([
      { type: 'consent.withdrawn', ...fromHttp, ...ids },
      { type: 'token.revoked', ...fromHttp, cause: 'consent_withdrawn', extent: 'user', ...ids, grantId: null },
    ]);
    expectNoSecrets(h);
  });

  it('oauth.withdrawConsent reports the same two events with issuer and ip null (off HTTP)', async () => {
    const h = await harness();
    await h.oauth.withdrawConsent(USER.id, h.codeClient.clientId);
    const ids = { time: expect.any(Date), issuer: null, ip: null, clientId: h.codeClient.clientId, userId: USER.id };
    expect(h.seen).toEqual([
      { type: 'consent.withdrawn', ...ids },
      { type: 'token.revoked', ...ids, cause: 'consent_withdrawn', extent: 'user', grantId: null },
    ]);
  });

  it('a listener that throws changes no answer, is reported to the logger, and the other listeners still hear the event', async () => {
    const h = await harness();
    h.oauth.events.on('token.issued', () => {
      throw new Error('audit sink is down');
    });
    const res = await token(h, h.credentialsClient, { grant_type: 'client_credentials' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ token_type: 'Bearer', expires_in: 3600 });
    expect(h.seen.map((e) => e.type)).toEqual(['token.issued']);
    expect(h.logged).toEqual([expect.stringMatching(/listener for token\.issued failed: audit sink is down/)]);
    // The token it issued works: the failure did not undo or repeat the save.
    const introspected = await request(h.app).post('/oauth2/introspect').set('Authorization', basic(h.credentialsClient)).type('form')
      .send({ token: res.body.access_token as string });
    expect(introspected.body.active).toBe(true);
  });

  it('without a listener no event is built on the token endpoint (events.active is false)', async () => {
    const h = await harness();
    h.oauth.events.removeAllListeners();
    expect(h.oauth.events.active).toBe(false);
    expect((await token(h, h.credentialsClient, { grant_type: 'client_credentials' })).status).toBe(200);
    expect(h.seen).toEqual([]);
  });
});
