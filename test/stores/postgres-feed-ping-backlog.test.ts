// The PostgreSQL revocation feed's pings through a pool that has no connection free: one waits, never a queue of them.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { startPostgresRevocationFeed } from '../../src/stores/postgres/revocation-feed.js';
import type { PostgresPool } from '../../src/stores/postgres/driver.js';

afterEach(() => {
  vi.useRealTimers();
});

/** A pool whose every connection is taken (a host's pool without connectionTimeoutMillis): a query waits for ever. */
function exhaustedPool(): PostgresPool & { readonly waiting: number } {
  let waiting = 0;
  class FakeClient {
    async connect(): Promise<void> {}
    async query() {
      return { rows: [], rowCount: 0 };
    }
    async end(): Promise<void> {}
    on(): this {
      return this;
    }
  }
  return {
    options: {},
    Client: FakeClient,
    async connect() {
      throw new Error('not used');
    },
    query() {
      waiting += 1;
      return new Promise(() => undefined);
    },
    async end() {},
    get waiting() {
      return waiting;
    },
  } as unknown as PostgresPool & { readonly waiting: number };
}

describe('PostgreSQL revocation feed pings (RFC 7009 §2.1: the feed must not take the pool the revocations need)', () => {
  it('sends no further ping while one still waits for a pooled connection, across heartbeats and reconnections', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'performance'] });
    const pool = exhaustedPool();
    const starting = startPostgresRevocationFeed({ pool, channel: 'eor_revoked_test', timeoutMs: 300, logger: { warn() {} } });
    await vi.advanceTimersByTimeAsync(300);
    const feed = await starting;
    // A minute of heartbeats (every 2 s) and of reconnections (each silence past 2.3 s).
    await vi.advanceTimersByTimeAsync(60_000);
    expect(feed.feed.mark()).toBeNull();
    expect(pool.waiting).toBe(1);
    await feed.close();
  });
});
