// RFC 9700 §4.14: a revocation is reported once, by the request that made it, on every built-in store: a second replay
// of a code, or a second revocation of a token that another request revoked first, reports no second token.revoked.
import express from 'express';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { createOAuthRouter } from '../../src/router.js';
import { registerClient } from '../../src/clients/register-client.js';
import { OAuthEvents } from '../../src/events/oauth-events.js';
import type { OAuthEvent } from '../../src/events/event-types.js';
import type { Store } from '../../src/stores/contract.js';
import { hashToken } from '../../src/crypto/hash-token.js';
import { createCredential } from '../../src/crypto/ordered-token.js';
import { createGrantId } from '../../src/crypto/random-grant-id.js';
import { basic, createTestUserAuth, ISSUER, REDIRECT_URI, USER, type TestClient } from '../helpers/app.js';
import { builtInStores, withOpenedStore } from '../helpers/built-in-stores.js';

type Lookup = 'findAccessToken' | 'findRefreshToken';

/**
 * `store` whose `lookup` holds its calls until `count` of them are waiting, then lets them all go: the requests that
 * made them have each found the token live before any of them revokes it, the interleaving a race would need luck for.
 */
function holdLookups(store: Store, lookup: Lookup, count: number): Store {
  const waiting: Array<() => void> = [];
  const tokens = {
    ...store.tokens,
    [lookup]: async (hash: string) => {
      const found = await store.tokens[lookup](hash);
      if (waiting.length < count) {
        await new Promise<void>((resolve) => {
          waiting.push(resolve);
          if (waiting.length === count) for (const go of waiting) go();
        });
      }
      return found;
    },
  };
  return { ...store, tokens };
}

interface Harness {
  readonly app: express.Express;
  readonly client: TestClient;
  readonly revoked: OAuthEvent[];
  readonly replayed: OAuthEvent[];
  /** Saves a code of USER for the client, as the authorization endpoint does; returns it and its grant. */
  code(): Promise<{ code: string; grantId: string }>;
}

async function harness(store: Store, served: Store = store, deletedUsers = new Set<string>()): Promise<Harness> {
  const events = new OAuthEvents();
  const revoked: OAuthEvent[] = [];
  const replayed: OAuthEvent[] = [];
  events.on('token.revoked', (e) => revoked.push(e));
  events.on('code.replayed', (e) => replayed.push(e));
  const oauth = createOAuthRouter(served, createTestUserAuth(deletedUsers), {
    issuer: ISSUER, session: { secret: 'test-session-secret-0123456789' }, logger: { warn() {}, error() {} }, events,
  });
  const app = express();
  app.use(oauth.router);
  const { client: registered, clientSecret } = await registerClient(store, {
    name: 'Once', flow: 'authorization_code', redirectUris: [REDIRECT_URI], allowedScopes: [],
  });
  const client = { clientId: registered.clientId, clientSecret };
  return {
    app, client, revoked, replayed,
    async code() {
      const code = createCredential(false);
      const grantId = createGrantId();
      await store.codes.saveCode({
        codeHash: hashToken(code), grantId, clientId: client.clientId, userId: USER.id, redirectUri: REDIRECT_URI, scope: [],
        codeChallenge: null, issuer: ISSUER, issuedAt: new Date(), expiresAt: new Date(Date.now() + 60_000),
      });
      return { code, grantId };
    },
  };
}

function exchange(h: Harness, code: string): Promise<request.Response> {
  return request(h.app).post('/oauth2/token').set('Authorization', basic(h.client)).type('form')
    .send({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI });
}

function revoke(h: Harness, token: string, hint?: string): Promise<request.Response> {
  return request(h.app).post('/oauth2/revoke').set('Authorization', basic(h.client)).type('form')
    .send({ token, ...(hint ? { token_type_hint: hint } : {}) });
}

describe.each(builtInStores('revocations_once'))('token.revoked is reported once (%s store)', (_name, available, open) => {
  it.skipIf(!available)('a code replayed twice reports code.replayed twice and token.revoked (code_replay) once', () => withOpenedStore(open, async (opened) => {
    const h = await harness(opened.store);
    const { code, grantId } = await h.code();
    expect((await exchange(h, code)).status).toBe(200);
    for (const replay of [await exchange(h, code), await exchange(h, code)]) {
      expect(replay.status).toBe(400);
      expect(replay.body.error).toBe('invalid_grant');
    }
    expect(h.replayed.map((e) => ('grantId' in e ? e.grantId : null))).toEqual([grantId, grantId]);
    expect(h.revoked).toEqual([expect.objectContaining({ cause: 'code_replay', extent: 'grant', grantId, userId: USER.id })]);
  }));

  it.skipIf(!available)('two revocations of one access token, both finding it live, report token.revoked (extent token) once', () => withOpenedStore(open, async (opened) => {
    const h = await harness(opened.store, holdLookups(opened.store, 'findAccessToken', 2));
    const { code, grantId } = await h.code();
    const issued = await exchange(h, code);
    expect(issued.status).toBe(200);
    const answers = await Promise.all([revoke(h, issued.body.access_token as string), revoke(h, issued.body.access_token as string)]);
    expect(answers.map((a) => a.status)).toEqual([200, 200]);
    expect(await opened.store.tokens.findAccessToken(hashToken(issued.body.access_token as string))).toBeNull();
    expect(h.revoked).toEqual([expect.objectContaining({ cause: 'revocation_endpoint', extent: 'token', grantId })]);
  }));

  it.skipIf(!available)('two revocations of one refresh token, both finding it live, report token.revoked (extent grant) once', () => withOpenedStore(open, async (opened) => {
    const h = await harness(opened.store, holdLookups(opened.store, 'findRefreshToken', 2));
    const { code, grantId } = await h.code();
    const issued = await exchange(h, code);
    expect(issued.status).toBe(200);
    const refreshToken = issued.body.refresh_token as string;
    const answers = await Promise.all([revoke(h, refreshToken, 'refresh_token'), revoke(h, refreshToken, 'refresh_token')]);
    expect(answers.map((a) => a.status)).toEqual([200, 200]);
    expect(await opened.store.tokens.findRefreshToken(hashToken(refreshToken))).toBeNull();
    expect(h.revoked).toEqual([expect.objectContaining({ cause: 'revocation_endpoint', extent: 'grant', grantId })]);
  }));

  it.skipIf(!available)('two refreshes of a deleted user\'s grant, both finding it live, report token.revoked (user_deleted) once', () => withOpenedStore(open, async (opened) => {
    const deletedUsers = new Set<string>();
    const h = await harness(opened.store, holdLookups(opened.store, 'findRefreshToken', 2), deletedUsers);
    const { code, grantId } = await h.code();
    const issued = await exchange(h, code);
    expect(issued.status).toBe(200);
    deletedUsers.add(USER.id);
    const refresh = () => request(h.app).post('/oauth2/token').set('Authorization', basic(h.client)).type('form')
      .send({ grant_type: 'refresh_token', refresh_token: issued.body.refresh_token as string });
    const answers = await Promise.all([refresh(), refresh()]);
    expect(answers.map((a) => [a.status, a.body.error])).toEqual([[400, 'invalid_grant'], [400, 'invalid_grant']]);
    expect(h.revoked).toEqual([expect.objectContaining({ cause: 'user_deleted', extent: 'grant', grantId, userId: USER.id })]);
  }));
});
