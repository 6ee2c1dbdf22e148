// Bulk seeding of live or expired tokens for bench/scale.js, in each store's own layout, by its fastest correct path.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { benchName, dropPostgresSchema, deleteRedisPrefix, openRedisStore } from './bench-stores.js';

/** Seeded token i is the plaintext `${prefix}${i}`; its grant `${prefix}g${i}`; its integration one of `clients`. */
export const SEED_SCOPE = ['bench:read'];
const SEED_ISSUER = 'http://127.0.0.1/scale-seed';

/**
 * One store's storage for a scale run: `seed(from, to, { expired })` adds tokens from..to−1 (access tokens of
 * client_credentials grants, living two hours, or expired a minute ago), `serverArgs` points a bench/server.js
 * child at the same data, `countExpired()` counts rows still waiting for the sweep, `drop()` removes it all.
 */
export async function createSeedTarget(kind, { postgresUrl, redisUrl, clients, prefix }) {
  const { hashSecret } = await import('express-oauth-router');
  const record = (i, expiresAt) => ({
    tokenHash: hashSecret(`${prefix}${i}`), grantId: `${prefix}g${i}`, clientId: `scale-client-${i % clients}`,
    userId: null, scope: SEED_SCOPE, issuer: SEED_ISSUER, expiresAt: new Date(expiresAt),
  });
  const expiry = (expired) => (expired ? Date.now() - 60_000 : Date.now() + 7_200_000);

  if (kind === 'sqlite') {
    const { createSqliteStore } = await import('express-oauth-router/stores/sqlite');
    const { default: Database } = await import('better-sqlite3');
    const { prepareSqliteStatements } = await import('../dist/stores/sqlite/statements.js');
    const { tokenValues } = await import('../dist/stores/sqlite/rows.js');
    const dir = mkdtempSync(join(tmpdir(), 'oauth-bench-scale-'));
    const file = join(dir, 'oauth.sqlite');
    await createSqliteStore({ filename: file, sweepIntervalSeconds: 0 }).close(); // the store's own schema
    return {
      serverArgs: ['--store', 'sqlite', '--sqlite-file', file],
      async seed(from, to, { expired = false } = {}) {
        const db = new Database(file);
        try {
          db.pragma('cache_size = -262144'); // 256 MB for the seeding connection only: random keys, four b-trees
          const { insertToken } = prepareSqliteStatements(db);
          const expiresAt = expiry(expired);
          // One transaction of the store's own prepared insert: one sync for the lot.
          db.transaction(() => {
            for (let i = from; i < to; i += 1) insertToken.run(...tokenValues('access', record(i, expiresAt), Date.now()));
          }).immediate();
          // The server child must not start by checkpointing a WAL of hundreds of MB inside the timed window.
          db.pragma('wal_checkpoint(TRUNCATE)');
        } finally {
          db.close();
        }
      },
      async countExpired() {
        const db = new Database(file, { readonly: true });
        try {
          return db.prepare('SELECT count(*) AS n FROM tokens WHERE expires_at <= ?').get(Date.now()).n;
        } finally {
          db.close();
        }
      },
      async drop() {
        rmSync(dir, { recursive: true, force: true });
      },
    };
  }

  if (kind === 'postgres') {
    const { createPostgresStore } = await import('express-oauth-router/stores/postgres');
    const { default: pg } = await import('pg');
    const schema = benchName('scale');
    await (await createPostgresStore({ connectionString: postgresUrl, schema, sweepIntervalSeconds: 0, logger: { warn: () => {} } })).close();
    const client = new pg.Client({ connectionString: postgresUrl });
    await client.connect();
    const tokens = `"${schema}"."tokens"`;
    const grants = `"${schema}"."grants"`;
    // hashSecret in SQL: base64url of SHA-256, no padding (checked against Node's below).
    const hash = `translate(rtrim(encode(sha256(convert_to($1 || i::text, 'UTF8')), 'base64'), '='), '+/', '-_')`;
    return {
      serverArgs: ['--store', 'postgres', '--pg-url', postgresUrl, '--pg-schema', schema],
      async seed(from, to, { expired = false } = {}) {
        const expiresAt = new Date(expiry(expired));
        // Multi-row INSERT … SELECT generate_series, 200,000 rows per statement: the token and its grant row,
        // as save_tokens writes them.
        for (let lo = from; lo < to; lo += 200_000) {
          const hi = Math.min(to, lo + 200_000);
          const params = [prefix, lo, hi - 1, clients, SEED_ISSUER, expiresAt];
          await client.query('BEGIN');
          await client.query(
            `INSERT INTO ${tokens} (token_hash, kind, grant_id, client_id, user_id, scope, issuer, expires_at)
             SELECT ${hash}, 'access', $1 || 'g' || i, 'scale-client-' || (i % $4), NULL, ARRAY['bench:read'], $5, $6
             FROM generate_series($2::bigint, $3::bigint) AS i`,
            params,
          );
          await client.query(
            `INSERT INTO ${grants} (grant_id, expires_at) SELECT $1 || 'g' || i, $4 FROM generate_series($2::bigint, $3::bigint) AS i`,
            [prefix, lo, hi - 1, expiresAt],
          );
          await client.query('COMMIT');
        }
        // What autovacuum would have done by the time a real table held this many rows.
        await client.query(`ANALYZE ${tokens}`);
        await client.query(`ANALYZE ${grants}`);
        const { rows } = await client.query(`SELECT token_hash FROM ${tokens} WHERE grant_id = $1`, [`${prefix}g${from}`]);
        if (rows[0]?.token_hash !== hashSecret(`${prefix}${from}`)) throw new Error('PostgreSQL seeding: SQL hash differs from hashSecret');
      },
      async countExpired() {
        const { rows } = await client.query(`SELECT count(*)::int AS n FROM ${tokens} WHERE expires_at <= now()`);
        return rows[0].n;
      },
      async drop() {
        await client.end();
        await dropPostgresSchema(postgresUrl, schema);
      },
    };
  }

  if (kind === 'redis') {
    // The key layout is the store's own business (and is changing for Redis Cluster): seed through saveTokens,
    // many calls in flight at once (node-redis pipelines them on one connection).
    const keyPrefix = `${benchName('scale')}:`;
    const cleanups = [];
    const store = await openRedisStore(redisUrl, keyPrefix, cleanups);
    return {
      serverArgs: ['--store', 'redis', '--redis-url', redisUrl, '--redis-prefix', keyPrefix],
      async seed(from, to, { expired = false } = {}) {
        if (expired) throw new Error('Redis expires keys itself (native TTL): no expired rows to seed');
        const expiresAt = expiry(false);
        const authorizedAt = new Date();
        for (let lo = from; lo < to; lo += 5000) {
          const saves = [];
          for (let i = lo; i < Math.min(to, lo + 5000); i += 1) saves.push(store.tokens.saveTokens(record(i, expiresAt), null, { authorizedAt }));
          if ((await Promise.all(saves)).some((saved) => !saved)) throw new Error('Redis seeding: saveTokens refused a token');
        }
      },
      async countExpired() {
        return 0;
      },
      async drop() {
        for (const cleanup of cleanups.reverse()) await cleanup();
        await deleteRedisPrefix(redisUrl, keyPrefix);
      },
    };
  }
  throw new Error(`unknown store ${kind}`);
}
