// The PostgreSQL revocation feed behind a pooler in transaction mode: a listener that hears only itself never vouches.
import { afterEach, describe, expect, it } from 'vitest';
import { startPostgresRevocationFeed, type PostgresRevocationFeed } from '../../src/stores/postgres/revocation-feed.js';
import type { PostgresPool } from '../../src/stores/postgres/driver.js';

type Listener = (message: { channel: string; payload?: string }) => void;

/**
 * A pg pool and `Client` class without a server, in one of two shapes. `session`: the listener has a server session
 * of its own (a direct connection, or PgBouncer in session mode), so a NOTIFY committed by anyone reaches it.
 * `transaction`: PgBouncer in transaction mode, whose LISTEN stays on a server connection that goes back to the
 * pool once the statement ends; PostgreSQL still hands a session its own notifications at its commit, so the
 * listener hears a NOTIFY it sends itself, and nothing anyone else commits.
 */
function fakePool(mode: 'session' | 'transaction'): PostgresPool & { notifyFromElsewhere(payload?: string): void } {
  const listeners = new Set<Listener>();
  let channel = '';
  const deliver = (to: Iterable<Listener>, payload?: string) => {
    for (const listener of to) listener({ channel, ...(payload !== undefined ? { payload } : {}) });
  };
  class FakeClient {
    private readonly own: Listener[] = [];
    async connect(): Promise<void> {}
    async query(config: { text: string; values?: unknown[] } | string) {
      const text = typeof config === 'string' ? config : config.text;
      const listen = /^LISTEN "(.+)"$/.exec(text);
      if (listen) {
        channel = listen[1]!;
        for (const listener of this.own) listeners.add(listener);
      } else if (typeof config !== 'string' && text.includes('pg_notify')) {
        // Its own notification, handed to it at its commit whichever server connection ran it.
        deliver(mode === 'transaction' ? this.own : listeners, config.values?.[1] as string | undefined);
      }
      return { rows: [], rowCount: 1 };
    }
    async end(): Promise<void> {
      for (const listener of this.own) listeners.delete(listener);
    }
    on(event: string, listener: Listener): this {
      if (event === 'notification') this.own.push(listener);
      return this;
    }
  }
  return {
    options: {},
    Client: FakeClient,
    async connect() {
      throw new Error('not used');
    },
    async query(config: { values?: unknown[] }) {
      // Another session's NOTIFY: only a listener with a session of its own hears it.
      if (mode === 'session') deliver(listeners, config.values?.[1] as string | undefined);
      return { rows: [], rowCount: 1 };
    },
    async end() {},
    notifyFromElsewhere(payload?: string) {
      if (mode === 'session') deliver(listeners, payload);
    },
  } as PostgresPool & { notifyFromElsewhere(payload?: string): void };
}

const feeds: PostgresRevocationFeed[] = [];
afterEach(async () => {
  for (const feed of feeds.splice(0)) await feed.close();
});

async function start(pool: PostgresPool): Promise<PostgresRevocationFeed> {
  const feed = await startPostgresRevocationFeed({ pool, channel: 'eor_revoked_test', timeoutMs: 300, logger: { warn() {} } });
  feeds.push(feed);
  return feed;
}

describe('PostgreSQL revocation feed and poolers (RFC 7009 §2.1: another instance\'s revocation must reach the cache)', () => {
  it('behind a pooler in transaction mode the mark is never a vouching one, since other sessions\' revocations are not heard', async () => {
    const pool = fakePool('transaction');
    const feed = await start(pool);
    expect(feed.feed.mark()).toBeNull();
    // A heartbeat later (2 s), still nothing vouched for.
    await new Promise((resolve) => setTimeout(resolve, 2200));
    expect(feed.feed.mark()).toBeNull();
  });

  it('with a session of its own the mark vouches, and moves with another session\'s revocation', async () => {
    const pool = fakePool('session');
    const feed = await start(pool);
    const before = feed.feed.mark();
    expect(before).not.toBeNull();
    pool.notifyFromElsewhere();
    expect(feed.feed.mark()).not.toBeNull();
    expect(feed.feed.mark()).not.toBe(before);
  });
});
