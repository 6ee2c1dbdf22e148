// requireBearer's token cache seen from outside: a host that counts lookups, and the revocation paths it must honour.
import request from 'supertest';
import { expect, it } from 'vitest';
import { REDIRECT_URI, USER, basic, createTestApp, type TestApp } from './app.js';
import { obtainCode } from './browser-flow.js';
import { clientCredentialsToken, revoke } from './token-requests.js';
import { createOAuthAdmin } from '../../src/admin/create-oauth-admin.js';
import { deleteOAuthClient } from '../../src/clients/delete-client.js';
import { disableClient } from '../../src/clients/disable-client.js';
import { rotateClientSecret } from '../../src/clients/rotate-client-secret.js';
import { withdrawConsent } from '../../src/consents/withdraw-consent.js';
import type { RevocationFeed, RevocationMark, Store } from '../../src/stores/contract.js';

/** Notifications cross a second connection: wait for them, however slow the machine, but never sleep blindly. */
export const NOTIFIED = { timeout: 10_000, interval: 5 };

/** A host whose access-token lookups are counted, its store's feed untouched. */
export interface CountingHost extends TestApp {
  readonly feed: RevocationFeed;
  lookups(): number;
}

/** A test host on `inner`, counting `findAccessToken` calls; `inner` must have a revocation feed. */
export async function countingHost(inner: Store): Promise<CountingHost> {
  let lookups = 0;
  const store: Store = {
    ...inner,
    tokens: {
      ...inner.tokens,
      findAccessToken(tokenHash) {
        lookups += 1;
        return inner.tokens.findAccessToken(tokenHash);
      },
    },
  };
  expect(inner.revocations, 'the store has a revocation feed').toBeDefined();
  return { ...(await createTestApp({}, store)), feed: inner.revocations!, lookups: () => lookups };
}

/** GET /api/v1/me with the token: the test host's requireBearer route. */
export function me(app: TestApp['app'], token: string): request.Test {
  return request(app).get('/api/v1/me').set('Authorization', `Bearer ${token}`);
}

/** Uses the token twice and proves the second use came from the cache; resolves the feed's mark then. */
export async function useUntilCached(h: CountingHost, token: string): Promise<RevocationMark> {
  expect((await me(h.app, token)).status).toBe(200);
  const before = h.lookups();
  expect((await me(h.app, token)).status).toBe(200);
  expect(h.lookups(), 'the second use is served from the cache').toBe(before);
  const mark = h.feed.mark();
  expect(mark).not.toBeNull();
  return mark;
}

/** Waits until another instance's revocation has reached `h` (its feed's mark moved). */
export async function untilNotified(h: CountingHost, before: RevocationMark): Promise<void> {
  await expect.poll(() => h.feed.mark(), NOTIFIED).not.toBe(before);
}

/** The next request with the token is refused as RFC 6750 §3.1 says. */
export async function expectRefused(h: TestApp, token: string): Promise<void> {
  const res = await me(h.app, token);
  expect(res.status).toBe(401);
  expect(res.body.error).toBe('invalid_token');
  expect(res.headers['www-authenticate']).toMatch(/error="invalid_token"/);
}

/** An access token of the authorization_code flow, with the code that obtained it. */
export async function codeGrant(h: TestApp): Promise<{ code: string; accessToken: string }> {
  const code = await obtainCode(h.app, h.codeClient);
  const res = await request(h.app).post('/oauth2/token').set('Authorization', basic(h.codeClient)).type('form')
    .send({ grant_type: 'authorization_code', redirect_uri: REDIRECT_URI, code });
  expect(res.status).toBe(200);
  return { code, accessToken: res.body.access_token as string };
}

/** Instance A serves and caches; instance B, on the same backend, revokes. */
export interface TwoInstances {
  readonly a: CountingHost;
  readonly b: TestApp;
  readonly storeB: Store;
}

/**
 * Registers the revocation paths every shared store's feed must carry from one instance to another: each
 * caches a token on A, revokes it through B, waits for A's mark to move, and expects the next request refused.
 * @see RFC 6750 §3.1, RFC 7009 §2.1, RFC 6749 §4.1.2 (code replay), §10.4.
 */
export function crossInstanceRevocationCases(twoInstances: () => Promise<TwoInstances>): void {
  it('a cached token revoked at the revocation endpoint of instance B is refused by instance A once notified', async () => {
    const { a, b } = await twoInstances();
    const token = await clientCredentialsToken(a.app, a.credentialsClient);
    const mark = await useUntilCached(a, token);
    expect((await revoke(b.app, a.credentialsClient, { token })).status).toBe(200);
    await untilNotified(a, mark);
    await expectRefused(a, token);
  });

  it('a cached token whose code was replayed at instance B (RFC 6749 §4.1.2) is refused by instance A once notified', async () => {
    const { a, b } = await twoInstances();
    const { code, accessToken } = await codeGrant(a);
    const mark = await useUntilCached(a, accessToken);
    const replay = await request(b.app).post('/oauth2/token').set('Authorization', basic(a.codeClient)).type('form')
      .send({ grant_type: 'authorization_code', redirect_uri: REDIRECT_URI, code });
    expect(replay.body.error).toBe('invalid_grant');
    await untilNotified(a, mark);
    await expectRefused(a, accessToken);
  });

  it('a cached token of a consent withdrawn through instance B is refused by instance A once notified', async () => {
    const { a, storeB } = await twoInstances();
    const { accessToken } = await codeGrant(a);
    const mark = await useUntilCached(a, accessToken);
    await withdrawConsent(storeB, USER.id, a.codeClient.clientId);
    await untilNotified(a, mark);
    await expectRefused(a, accessToken);
  });

  it('a cached token of an integration disabled through instance B is refused by instance A once notified', async () => {
    const { a, storeB } = await twoInstances();
    const token = await clientCredentialsToken(a.app, a.credentialsClient);
    const mark = await useUntilCached(a, token);
    expect(await disableClient(storeB, a.credentialsClient.clientId)).toBe(true);
    await untilNotified(a, mark);
    await expectRefused(a, token);
  });

  it('a cached token of an integration whose secret was rotated through instance B is refused by instance A once notified', async () => {
    const { a, storeB } = await twoInstances();
    const { accessToken } = await codeGrant(a);
    const mark = await useUntilCached(a, accessToken);
    expect(await rotateClientSecret(storeB, a.codeClient.clientId)).toEqual(expect.any(String));
    await untilNotified(a, mark);
    await expectRefused(a, accessToken);
  });

  it('a cached token of an integration deleted through instance B (oauth-admin clients delete) is refused by instance A once notified', async () => {
    const { a, storeB } = await twoInstances();
    const token = await clientCredentialsToken(a.app, a.credentialsClient);
    const mark = await useUntilCached(a, token);
    await deleteOAuthClient(storeB, a.credentialsClient.clientId);
    await untilNotified(a, mark);
    await expectRefused(a, token);
  });

  it('a cached token of a user revoked at every integration through instance B (admin.revokeTokens({ userId })) is refused by instance A once notified', async () => {
    const { a, storeB } = await twoInstances();
    const { accessToken } = await codeGrant(a);
    const mark = await useUntilCached(a, accessToken);
    await createOAuthAdmin(storeB).revokeTokens({ userId: USER.id });
    await untilNotified(a, mark);
    await expectRefused(a, accessToken);
  });

  it('a revocation by instance A itself moves its mark before it resolves: the next request is refused, no waiting', async () => {
    const { a } = await twoInstances();
    const token = await clientCredentialsToken(a.app, a.credentialsClient);
    await useUntilCached(a, token);
    expect((await revoke(a.app, a.credentialsClient, { token })).status).toBe(200);
    await expectRefused(a, token);
  });
}
