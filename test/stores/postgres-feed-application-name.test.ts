// The PostgreSQL revocation feed's LISTEN connection is named after its channel in pg_stat_activity, whatever
// `application_name` the connection string gives the pool (an operator ending the app's connections by name must not
// end the listener by mistake, nor miss it).
import pg from 'pg';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createPostgresStore } from '../../src/stores/postgres/index.js';
import { postgresRevocationChannel } from '../../src/stores/postgres/revocation-feed.js';
import { disposeOpened, type OpenedPostgresStore } from '../helpers/postgres-opened.js';

const url = process.env.OAUTH_TEST_POSTGRES_URL ?? '';
if (!url) console.info('PostgreSQL feed application_name tests skipped: set OAUTH_TEST_POSTGRES_URL to run them');

const admin = url ? new pg.Pool({ connectionString: url, max: 1 }) : null;
const opened: OpenedPostgresStore[] = [];

/** `url` with `application_name` set in its query string. */
function named(applicationName: string): string {
  const u = new URL(url);
  u.searchParams.set('application_name', applicationName);
  return u.toString();
}

/** The application names of this database's sessions, with how many of each. */
async function sessionsNamed(names: readonly string[]): Promise<Record<string, number>> {
  const { rows } = await admin!.query<{ name: string; n: number }>(
    `SELECT application_name AS name, count(*)::int AS n FROM pg_stat_activity
     WHERE datname = current_database() AND application_name = ANY($1) GROUP BY 1`,
    [names],
  );
  return Object.fromEntries(rows.map((row) => [row.name, row.n]));
}

describe.skipIf(!url)('PostgreSQL revocation feed: its connection is named after its channel (RFC 7009 §2.1)', () => {
  afterEach(async () => {
    await disposeOpened(opened, admin!);
  });
  afterAll(async () => {
    await admin?.end();
  });

  it('with application_name in a host pool\'s connection string, the listener still shows the channel', async () => {
    const schema = `oauth_an${process.pid}_${Math.random().toString(36).slice(2, 10)}`;
    const appName = `eor_app_${Math.random().toString(36).slice(2, 10)}`;
    const pool = new pg.Pool({ connectionString: named(appName), max: 2 });
    const store = await createPostgresStore({ pool, schema, sweepIntervalSeconds: 0 });
    opened.push({ store, pool, schema });
    const channel = postgresRevocationChannel(schema, '');
    expect(store.revocations.mark()).not.toBeNull();
    const sessions = await sessionsNamed([channel, appName]);
    expect(sessions[channel]).toBe(1);
    // The pool's own connections keep the name the host gave them.
    expect(sessions[appName]).toBeGreaterThanOrEqual(1);
  });

  it('with application_name in the store\'s connectionString, the same', async () => {
    const schema = `oauth_an${process.pid}_${Math.random().toString(36).slice(2, 10)}`;
    const appName = `eor_app_${Math.random().toString(36).slice(2, 10)}`;
    const store = await createPostgresStore({ connectionString: named(appName), schema, sweepIntervalSeconds: 0 });
    try {
      const channel = postgresRevocationChannel(schema, '');
      expect(store.revocations.mark()).not.toBeNull();
      expect(await sessionsNamed([channel])).toEqual({ [channel]: 1 });
    } finally {
      await store.close();
      await admin!.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    }
  });
});
