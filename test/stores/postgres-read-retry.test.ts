// PostgreSQL store: a read that draws a pooled connection whose backend was just terminated is sent once more on
// another connection (a SELECT changes nothing, whether or not it reached the server); writes and timeouts never are.
import { createServer, type Server } from 'node:net';
import pg from 'pg';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createPostgresStore, type PostgresStore } from '../../src/stores/postgres/index.js';
import { createPostgresRunner, prepareSql } from '../../src/stores/postgres/query.js';
import type { PostgresPoolConnection, PostgresQueryConfig } from '../../src/stores/postgres/driver.js';
import { StoreUnavailableError } from '../../src/stores/store-unavailable-error.js';
import { disposeOpened, type OpenedPostgresStore } from '../helpers/postgres-opened.js';

const url = process.env.OAUTH_TEST_POSTGRES_URL ?? '';
if (!url) console.info('PostgreSQL read retry tests skipped: set OAUTH_TEST_POSTGRES_URL to run them');

const admin = url ? new pg.Pool({ connectionString: url, max: 1 }) : null;
const opened: OpenedPostgresStore[] = [];

/**
 * Ends the idle backends of the pool named `name` (its connections' application_name; the store's listener sets its own
 * to its channel once connected, so it is spared) and returns how many. Only those: the suite's other files run
 * beside this one on the same database, and an idle connection of theirs ended here would fail them.
 */
async function terminateIdle(name: string): Promise<number> {
  const { rows } = await admin!.query<{ n: number }>(
    `SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity
     WHERE datname = current_database() AND pid <> pg_backend_pid() AND state = 'idle' AND application_name = $1`,
    [name],
  );
  return rows[0]!.n;
}

describe.skipIf(!url)('PostgreSQL store: reads on a just-terminated connection (RFC 6750 §3.1 availability)', () => {
  afterEach(async () => {
    await disposeOpened(opened, admin!);
  });
  afterAll(async () => {
    await admin?.end();
  });

  it('60 reads made right after pg_terminate_backend of the pool\'s idle connections all answer', async () => {
    const schema = `oauth_rr${process.pid}_${Math.random().toString(36).slice(2, 10)}`;
    const name = `rr${process.pid}_${Math.random().toString(36).slice(2, 10)}`;
    const pool = new pg.Pool({ connectionString: url, max: 4, connectionTimeoutMillis: 5000, application_name: name });
    pool.on('error', () => undefined);
    const store: PostgresStore = await createPostgresStore({
      pool, schema, sweepIntervalSeconds: 0, logger: { warn: () => undefined },
    });
    opened.push({ store, pool, schema });
    const reads = [
      () => store.clients.findClient('no-such-client'),
      () => store.tokens.findAccessToken('no-such-token'),
      () => store.tokens.findRefreshToken('no-such-token'),
      () => store.rateLimits!.get('no-such-key', new Date()),
    ];
    let terminated = 0;
    const failures: string[] = [];
    for (let i = 0; i < 60; i += 1) {
      // Four idle connections in the pool (the warm-up may itself draw one the last round ended), then all of them
      // ended, then a read at once.
      await Promise.allSettled([1, 2, 3, 4].map(() => pool.query('SELECT 1')));
      terminated += await terminateIdle(name);
      try {
        await reads[i % reads.length]!();
      } catch (err) {
        failures.push((err as Error).message);
      }
    }
    expect(terminated).toBeGreaterThanOrEqual(60);
    expect(failures).toEqual([]);
  });
});

/** A pool whose `query` answers from `script`, one entry a call, recording each call's config. */
function scriptedPool(script: readonly (Error | 'ok')[], options: { connectionTimeoutMillis?: number; max?: number } = {}) {
  const calls: PostgresQueryConfig[] = [];
  const released: Array<Error | boolean | undefined> = [];
  async function query(config: PostgresQueryConfig) {
    const step = script[calls.length];
    calls.push(config);
    if (step === undefined) throw new Error('unexpected query');
    if (step instanceof Error) throw step;
    return { rows: [{ ok: 1 }], rowCount: 1 };
  }
  const pool = {
    options,
    query,
    // A read draws its connection itself (a failure as one opens is not retried): each is released, with its error.
    async connect() {
      return { query, release: (err?: Error | boolean) => { released.push(err); } };
    },
    async end() {},
    on() {},
    removeListener() {},
  } as unknown as PostgresPoolConnection;
  return { pool, calls, released };
}

const terminated = () => Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' });
const SELECT = prepareSql('SELECT 1 AS ok');

describe('PostgreSQL runner: read retry rules', () => {
  it('a read that met a terminated backend is sent once more, within the query timeout', async () => {
    const { pool, calls, released } = scriptedPool([terminated(), 'ok'], { connectionTimeoutMillis: 5000 });
    const { rows } = await createPostgresRunner(pool, 1000).read(SELECT, []);
    expect(rows).toEqual([{ ok: 1 }]);
    expect(calls).toHaveLength(2);
    // The broken connection goes back with its error (pg's pool then discards it), the good one without.
    expect(released).toEqual([expect.objectContaining({ code: '57P01' }), undefined]);
    expect(calls[1]!.query_timeout).toBeLessThanOrEqual(1000);
    expect(calls[1]!.query_timeout).toBeGreaterThan(0);
  });

  it('"Connection terminated unexpectedly" too, once for each connection of the pool at most', async () => {
    const lost = () => new Error('Connection terminated unexpectedly');
    const { pool, calls } = scriptedPool([lost(), lost(), lost(), lost(), 'ok'], { max: 2 });
    await expect(createPostgresRunner(pool, 1000).read(SELECT, [])).rejects.toBeInstanceOf(StoreUnavailableError);
    expect(calls).toHaveLength(3);
    const again = scriptedPool([lost(), lost(), 'ok'], { max: 2 });
    expect((await createPostgresRunner(again.pool, 1000).read(SELECT, [])).rows).toEqual([{ ok: 1 }]);
  });

  it('a timeout, a refused connection or a bug is not retried', async () => {
    for (const err of [
      new Error('Query read timeout'),
      Object.assign(new Error('canceling statement due to statement timeout'), { code: '57014' }),
      new Error('timeout exceeded when trying to connect'),
      Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }),
      Object.assign(new Error('relation "x" does not exist'), { code: '42P01' }),
    ]) {
      const { pool, calls } = scriptedPool([err, 'ok']);
      await expect(createPostgresRunner(pool, 1000).read(SELECT, [])).rejects.toThrow();
      expect(calls).toHaveLength(1);
    }
  });

  it('a write (query) that met a terminated backend is never retried', async () => {
    const { pool, calls } = scriptedPool([terminated(), 'ok']);
    await expect(createPostgresRunner(pool, 1000).query(SELECT, [])).rejects.toBeInstanceOf(StoreUnavailableError);
    expect(calls).toHaveLength(1);
  });
});

describe('PostgreSQL runner: a connection that fails as it opens is not a connection that broke', () => {
  // An address that accepts every connection and closes it at once: HAProxy or a pooler with no server behind it in
  // a failover. Each new connection fails as the first did, so a read sent again only multiplies the attempts.
  it.each(['closed', 'reset'])('a read against an address that %s each connection opens it once, as a write does', async (how) => {
    let accepted = 0;
    const server: Server = createServer((socket) => {
      accepted += 1;
      if (how === 'reset') socket.resetAndDestroy();
      else socket.destroy();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as { port: number }).port;
    const pool = new pg.Pool({ host: '127.0.0.1', port, user: 'nobody', database: 'none', max: 10, connectionTimeoutMillis: 5000 });
    pool.on('error', () => undefined);
    try {
      const runner = createPostgresRunner(pool as unknown as PostgresPoolConnection, 1000);
      await expect(runner.read(SELECT, [])).rejects.toBeInstanceOf(StoreUnavailableError);
      expect(accepted).toBe(1);
    } finally {
      await pool.end();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
