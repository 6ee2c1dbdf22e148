// Durations beyond what Node's timers can wait are refused at start-up: a longer one fires after 1 ms instead.
import { describe, expect, it } from 'vitest';
import { createMemoryStore } from '../../src/stores/memory/index.js';
import { createSqliteStore } from '../../src/stores/sqlite/index.js';
import { createPostgresStore } from '../../src/stores/postgres/index.js';
import { createRedisStore } from '../../src/stores/redis/index.js';
import { createOAuthRouter } from '../../src/router.js';
import { ISSUER, createTestUserAuth } from '../helpers/app.js';

/** A monthly sweep: 30 days is more milliseconds than setTimeout's 2^31 − 1 (about 24.8 days). */
const THIRTY_DAYS_S = 30 * 86_400;
/** Nothing listens on port 9 (discard): a store that tried to connect would fail there, not with a TypeError. */
const NOWHERE_PG = 'postgres://postgres@127.0.0.1:9/none';
const NOWHERE_REDIS = 'redis://127.0.0.1:9';

describe('a duration Node timers cannot wait is refused, not turned into a 1 ms loop', () => {
  it('memory store: sweepIntervalSeconds over 24.8 days throws naming the option and the bound', () => {
    expect(() => createMemoryStore({ sweepIntervalSeconds: THIRTY_DAYS_S })).toThrow(/sweepIntervalSeconds.*at most 2147483/);
  });

  it('memory store: sweepIntervalSeconds of exactly 2147483 s still starts (the bound itself fits)', async () => {
    const store = createMemoryStore({ sweepIntervalSeconds: 2_147_483 });
    await store.close();
  });

  it('SQLite store: sweepIntervalSeconds over 24.8 days throws', () => {
    expect(() => createSqliteStore({ filename: ':memory:', sweepIntervalSeconds: THIRTY_DAYS_S })).toThrow(/sweepIntervalSeconds.*at most 2147483/);
  });

  it('PostgreSQL store: sweepIntervalSeconds over 24.8 days is refused before connecting', async () => {
    await expect(createPostgresStore({ connectionString: NOWHERE_PG, sweepIntervalSeconds: THIRTY_DAYS_S }))
      .rejects.toThrow(/sweepIntervalSeconds.*at most 2147483/);
  });

  it('PostgreSQL store: a queryTimeoutMs whose deadline (twice it) overflows is refused before connecting', async () => {
    await expect(createPostgresStore({ connectionString: NOWHERE_PG, queryTimeoutMs: 1_500_000_000 }))
      .rejects.toThrow(/queryTimeoutMs.*at most 1073741823/);
  });

  it('Redis store: sweepIntervalSeconds over 24.8 days is refused before connecting', async () => {
    await expect(createRedisStore({ url: NOWHERE_REDIS, sweepIntervalSeconds: THIRTY_DAYS_S }))
      .rejects.toThrow(/sweepIntervalSeconds.*at most 2147483/);
  });

  it('Redis store: a commandTimeoutMs whose socket timeout (three times it) overflows is refused before connecting', async () => {
    await expect(createRedisStore({ url: NOWHERE_REDIS, commandTimeoutMs: 1_000_000_000 }))
      .rejects.toThrow(/commandTimeoutMs.*at most 715827882/);
  });

  it('readiness check: a timeoutMs over 24.8 days is refused, not a 1 ms timeout that fails every check', async () => {
    const store = createMemoryStore();
    const oauth = createOAuthRouter(store, createTestUserAuth(new Set()), {
      issuer: ISSUER, session: { secret: 'test-session-secret-0123456789' }, logger: { warn() {}, error() {} },
    });
    await expect(oauth.health.check({ timeoutMs: 3_000_000_000 })).rejects.toThrow(/timeoutMs.*at most 2147483647/);
    await store.close();
  });
});
