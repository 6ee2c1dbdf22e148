// PostgreSQL integration copies across a failover: a copy read before the revocation feed's gap is not used after it.
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { createPostgresStore } from '../../src/stores/postgres/index.js';
import { postgresRevocationChannel } from '../../src/stores/postgres/revocation-feed.js';
import { buildClient } from '../../src/testing/conformance-fixtures.js';

const url = process.env.OAUTH_TEST_POSTGRES_URL ?? '';
if (!url) console.info('PostgreSQL copy-failover tests skipped: set OAUTH_TEST_POSTGRES_URL=postgres://postgres@127.0.0.1:5432/test to run them');

const admin = url ? new pg.Pool({ connectionString: url, max: 2 }) : null;
afterAll(async () => {
  await admin?.end();
});

/** The feed reconnects with backoff (100 ms doubling); its first ping comes back within a heartbeat. */
const RECONNECTED = { timeout: 20_000, interval: 20 };

describe.skipIf(!url)('integration copies on PostgreSQL across a failover (RFC 6749 §2.3.1: a disabled integration authenticates nowhere)', () => {
  it('a copy read before the feed lost its connection is dropped: a promoted standby reuses the xids its primary lost, so a revision may match another version', async () => {
    const schema = `oauth_copyfo_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
    const store = await createPostgresStore({ connectionString: url, schema, sweepIntervalSeconds: 0, queryTimeoutMs: 2000 });
    try {
      const { client } = buildClient({ flow: 'client_credentials', redirectUris: [] });
      expect(await store.clients.createClient!(client)).toBe(true);
      await store.clients.findClient(client.clientId);
      expect(store.clientCopies.find(client.clientId)).toBeDefined();
      // The listener's connection goes, as it does when its server dies in a failover; the pool's stay.
      await admin!.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1', [
        postgresRevocationChannel(schema, ''),
      ]);
      await expect.poll(() => store.revocations.mark(), { timeout: 5000, interval: 10 }).toBeNull();
      expect(store.clientCopies.find(client.clientId)).toBeUndefined();
      // Read again once the feed is back, a copy is kept again.
      await expect.poll(() => store.revocations.mark(), RECONNECTED).not.toBeNull();
      await store.clients.findClient(client.clientId);
      expect(store.clientCopies.find(client.clientId)).toBeDefined();
    } finally {
      await store.close();
      await admin!.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    }
  });
});
