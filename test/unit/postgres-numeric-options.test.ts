// createPostgresStore's maxConnections and queryTimeoutMs are whole numbers from 1, anything else refused by name before connecting.
import { describe, expect, it } from 'vitest';
import { createPostgresStore } from '../../src/stores/postgres/index.js';

/** Nothing listens on port 9 (discard): a store that tried to connect would fail there, not with a TypeError. */
const NOWHERE_PG = 'postgres://postgres@127.0.0.1:9/none';

describe('maxConnections must be a whole number of connections ≥ 1', () => {
  // pg-pool reads 0 and NaN as its default of 10 and a negative size as a pool that is always full: `-1` failed
  // every call after queryTimeoutMs as an outage ("timeout exceeded when trying to connect").
  it.each([0, -1, Number.NaN, 1.5, Number.POSITIVE_INFINITY, '4'])('refuses %s naming the option, before connecting', async (value) => {
    await expect(createPostgresStore({ connectionString: NOWHERE_PG, maxConnections: value as number, queryTimeoutMs: 200 }))
      .rejects.toThrow(/createPostgresStore: option "maxConnections" must be a whole number of connections ≥ 1/);
  });

  it('takes 1 (and then fails only on the unreachable server)', async () => {
    await expect(createPostgresStore({ connectionString: NOWHERE_PG, maxConnections: 1, queryTimeoutMs: 200 }))
      .rejects.not.toThrow(/maxConnections/);
  });
});

describe('queryTimeoutMs must be a whole number of milliseconds ≥ 1', () => {
  // 0 silently meant the default 5000 (where statement_timeout = 0 means no timeout, and the Redis store refuses 0), and
  // PostgreSQL rounds a statement_timeout under 0.5 ms to 0: the server's own timeout turned off.
  it.each([0, 0.4, 1.5])('refuses %s naming the option, before connecting', async (value) => {
    await expect(createPostgresStore({ connectionString: NOWHERE_PG, queryTimeoutMs: value }))
      .rejects.toThrow(/createPostgresStore: option "queryTimeoutMs" must be a whole number of milliseconds ≥ 1/);
  });

  it('takes 1 (and then fails only on the unreachable server)', async () => {
    await expect(createPostgresStore({ connectionString: NOWHERE_PG, queryTimeoutMs: 1 })).rejects.not.toThrow(/queryTimeoutMs/);
  });
});
