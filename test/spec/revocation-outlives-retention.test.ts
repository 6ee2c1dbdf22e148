// A revocation outlives its tombstones: once their retention (a day) has passed and been swept, ten-year tokens stay revoked.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createClient } from 'redis';
import { STORE_POLICY } from '../../src/stores/store-policy.js';
import { builtInStores, type OpenedStore } from '../helpers/built-in-stores.js';
import { createTestApp, USER, type TestApp } from '../helpers/app.js';
import { apiStatus, clientCredentialsToken, codeTokens, refresh, revoke } from '../helpers/token-requests.js';

const TEN_YEARS = 10 * 365 * 86_400;
/** Months later: far past every tombstone's retention, far within the tokens' lifetime. */
const MONTHS_MS = 90 * 86_400_000;

/**
 * Moves the test clock on by `ms` and lets the store catch up: Redis expires keys by its own clock, so every key of
 * the store's prefix whose TTL the test clock has passed since `startedAt` is deleted, as Redis would have; then a sweep.
 */
async function later(opened: OpenedStore, label: string, startedAt: number, ms: number): Promise<void> {
  vi.setSystemTime(Date.now() + ms);
  if (label === 'Redis') {
    const elapsed = Date.now() - startedAt;
    const admin = createClient({ url: process.env.OAUTH_TEST_REDIS_URL ?? '' });
    await admin.connect();
    const prefix = new URL(opened.storeUrl!).searchParams.get('prefix')!;
    for await (const keys of admin.scanIterator({ MATCH: `${prefix}*`, COUNT: 500 })) {
      for (const key of keys) {
        const ttl = await admin.pTTL(key);
        if (ttl >= 0 && ttl <= elapsed) await admin.del(key);
      }
    }
    await admin.quit();
  }
  await (opened.store as { sweepExpired?: () => Promise<void> }).sweepExpired?.();
}

describe.each(builtInStores('outlives_retention'))('%s: nothing revoked comes back after the retention', (label, available, open) => {
  let opened: OpenedStore;
  let t: TestApp;
  let startedAt = 0;
  beforeEach(async () => {
    if (!available) return;
    opened = await open();
    vi.useFakeTimers({ toFake: ['Date'] });
    startedAt = Date.now();
    t = await createTestApp({ accessTokenTtl: TEN_YEARS, refreshTokenTtl: TEN_YEARS }, opened.store);
  });
  afterEach(async () => {
    vi.useRealTimers();
    if (available) await opened.dispose();
  });

  it.runIf(available)('a grant revoked through its refresh token', async () => {
    expect(MONTHS_MS).toBeGreaterThan(STORE_POLICY.revocationRetentionMs);
    const tokens = await codeTokens(t.app, t.codeClient);
    expect((await revoke(t.app, t.codeClient, { token: tokens.refreshToken })).status).toBe(200);
    await later(opened, label, startedAt, MONTHS_MS);
    expect(await apiStatus(t.app, tokens.accessToken)).toBe(401);
    expect((await refresh(t.app, t.codeClient, tokens.refreshToken)).status).toBe(400);
  });

  it.runIf(available)("an integration's tokens, and one user's at an integration", async () => {
    const user = await codeTokens(t.app, t.codeClient);
    const machine = await clientCredentialsToken(t.app, t.credentialsClient);
    await opened.store.tokens.revokeClientTokens!(t.codeClient.clientId, USER.id);
    await opened.store.tokens.revokeClientTokens!(t.credentialsClient.clientId);
    await later(opened, label, startedAt, MONTHS_MS);
    expect(await apiStatus(t.app, user.accessToken)).toBe(401);
    expect(await apiStatus(t.app, machine)).toBe(401);
    expect((await refresh(t.app, t.codeClient, user.refreshToken)).status).toBe(400);
    // The integrations themselves still issue.
    expect(await apiStatus(t.app, await clientCredentialsToken(t.app, t.credentialsClient))).toBe(200);
  });
});
