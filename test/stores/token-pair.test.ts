// saveTokens of a refresh token that is not of the access token's grant, integration and user: every built-in store refuses the call alike.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { createClient } from 'redis';
import { describe, expect, it } from 'vitest';
import type { Store, TokenRecord } from '../../src/stores/contract.js';
import { createMemoryStore } from '../../src/stores/memory/index.js';
import { createSqliteStore } from '../../src/stores/sqlite/index.js';
import { createPostgresStore } from '../../src/stores/postgres/index.js';
import { createRedisStore } from '../../src/stores/redis/index.js';
import { buildTokenPair } from '../../src/testing/conformance-fixtures.js';

const POSTGRES_URL = process.env.OAUTH_TEST_POSTGRES_URL ?? '';
const REDIS_URL = process.env.OAUTH_TEST_REDIS_URL ?? '';
const unique = `${process.pid}_${Date.now().toString(36)}`;

interface OpenedStore {
  readonly store: Store;
  dispose(): Promise<void>;
}

const STORES: ReadonlyArray<readonly [string, boolean, () => Promise<OpenedStore>]> = [
  ['memory', true, async () => ({ store: createMemoryStore(), dispose: async () => {} })],
  ['SQLite', true, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'token-pair-'));
    const store = createSqliteStore({ filename: join(dir, 'oauth.sqlite'), sweepIntervalSeconds: 0 });
    return { store, dispose: async () => { await store.close(); rmSync(dir, { recursive: true, force: true }); } };
  }],
  ['PostgreSQL', POSTGRES_URL !== '', async () => {
    const schema = `token_pair_${unique}`;
    const store = await createPostgresStore({ connectionString: POSTGRES_URL, schema, sweepIntervalSeconds: 0 });
    return {
      store,
      dispose: async () => {
        await store.close();
        const admin = new pg.Client({ connectionString: POSTGRES_URL });
        await admin.connect();
        await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
        await admin.end();
      },
    };
  }],
  ['Redis', REDIS_URL !== '', async () => {
    const prefix = `token-pair:${unique}:`;
    const store = await createRedisStore({ url: REDIS_URL, prefix, sweepIntervalSeconds: 0 });
    return {
      store,
      dispose: async () => {
        await store.close();
        const admin = createClient({ url: REDIS_URL });
        await admin.connect();
        for await (const keys of admin.scanIterator({ MATCH: `${prefix}*`, COUNT: 500 })) {
          if (keys.length > 0) await admin.del(keys);
        }
        await admin.quit();
      },
    };
  }],
];

const MISMATCHES: ReadonlyArray<readonly [string, Partial<TokenRecord>]> = [
  ['grant', { grantId: 'another-grant' }],
  ['integration', { clientId: 'another-integration' }],
  ['user', { userId: 'another-user' }],
];

describe.each(STORES)('saveTokens of the %s store (RFC 6749 §6: a refresh token belongs to one grant)', (_name, available, open) => {
  it.skipIf(!available)('refuses a refresh token of another grant, integration or user with a TypeError, and saves neither token', async () => {
    const opened = await open();
    try {
      for (const [, change] of MISMATCHES) {
        const { access, refresh } = buildTokenPair();
        const stray = { ...refresh, ...change };
        await expect(opened.store.tokens.saveTokens(access, stray, { authorizedAt: new Date() })).rejects.toThrow(
          new TypeError('saveTokens: the access and refresh token must share their grant, integration and user'),
        );
        expect(await opened.store.tokens.findAccessToken(access.tokenHash)).toBeNull();
        expect(await opened.store.tokens.findRefreshToken(stray.tokenHash)).toBeNull();
      }
      // The pair as the router builds it is saved, and judged once for both tokens.
      const { access, refresh } = buildTokenPair();
      expect(await opened.store.tokens.saveTokens(access, refresh, { authorizedAt: new Date() })).toBe(true);
      expect(await opened.store.tokens.findRefreshToken(refresh.tokenHash)).toEqual(refresh);
      await opened.store.tokens.revokeGrant(access.grantId);
      const again = buildTokenPair({ grantId: access.grantId, clientId: access.clientId, userId: access.userId });
      expect(await opened.store.tokens.saveTokens(again.access, again.refresh, { authorizedAt: new Date() })).toBe(false);
      expect(await opened.store.tokens.findRefreshToken(again.refresh.tokenHash)).toBeNull();
    } finally {
      await opened.dispose();
    }
  });
});
