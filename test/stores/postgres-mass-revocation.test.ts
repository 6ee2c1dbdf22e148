// PostgreSQL store: an integration-wide or user-wide revocation of more tokens than one statement should delete
// goes in chunks, in one transaction, and leaves nothing of the integration (or user) behind.
import pg from 'pg';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createPostgresStore, type PostgresStore } from '../../src/stores/postgres/index.js';
import { disposeOpened, type OpenedPostgresStore } from '../helpers/postgres-opened.js';
import { POSTGRES_REVOCATION_CHUNK } from '../../src/stores/postgres/tokens.js';
import { buildTokenPair } from '../../src/testing/conformance-fixtures.js';

const url = process.env.OAUTH_TEST_POSTGRES_URL ?? '';
if (!url) console.info('PostgreSQL mass revocation tests skipped: set OAUTH_TEST_POSTGRES_URL to run them');

const admin = url ? new pg.Pool({ connectionString: url, max: 2 }) : null;
const opened: OpenedPostgresStore[] = [];

/** A store whose connections record every statement's text, and a schema of its own. */
async function open(): Promise<{ store: PostgresStore; schema: string; texts: string[] }> {
  const schema = `oauth_m${process.pid}_${Math.random().toString(36).slice(2, 10)}`;
  const pool = new pg.Pool({ connectionString: url, max: 4 });
  const texts: string[] = [];
  // Transactions run on a checked-out client: each new connection's query is counted on the way out.
  pool.on('connect', (client) => {
    const query = client.query.bind(client) as (...args: unknown[]) => unknown;
    (client as unknown as { query: (...args: unknown[]) => unknown }).query = (config: unknown, ...rest: unknown[]) => {
      texts.push(typeof config === 'string' ? config : String((config as { text?: string }).text));
      return query(config, ...rest);
    };
  });
  const store = await createPostgresStore({ pool, schema, sweepIntervalSeconds: 0 });
  opened.push({ store, pool, schema });
  return { store, schema, texts };
}

/** `pairs` access and refresh token pairs of `clientId` (user `userId`), each its own grant, written in one statement. */
async function seed(schema: string, clientId: string, userId: string | null, pairs: number): Promise<void> {
  await admin!.query(
    `INSERT INTO "${schema}".tokens (token_hash, kind, grant_id, client_id, user_id, scope, issuer, expires_at)
     SELECT md5($1 || coalesce($2, '') || g || k), k, md5($1 || coalesce($2, '') || g), $1, $2, '{}', 'https://auth.example.com', now() + interval '1 hour'
     FROM generate_series(1, $3::int) g, unnest(ARRAY['access', 'refresh']) k`,
    [clientId, userId, pairs],
  );
}

async function count(schema: string, where: string, values: unknown[]): Promise<number> {
  const { rows } = await admin!.query<{ n: number }>(`SELECT count(*)::int AS n FROM "${schema}".tokens WHERE ${where}`, values);
  return rows[0]!.n;
}

describe.skipIf(!url)('PostgreSQL store: revocations of many tokens (RFC 7009 §2.1)', () => {
  afterEach(async () => {
    await disposeOpened(opened, admin!);
  });
  afterAll(async () => {
    await admin?.end();
  });

  it('revokeClientTokens deletes 2.5 chunks of tokens in three, marks every refresh token\'s grant, and leaves other integrations alone', async () => {
    const { store, schema, texts } = await open();
    const pairs = Math.ceil((POSTGRES_REVOCATION_CHUNK * 2.5) / 2);
    await seed(schema, 'mass-client', 'user-1', pairs);
    await seed(schema, 'other-client', 'user-1', 10);
    const deletesBefore = texts.filter((text) => text.includes('token_hash = ANY($1::text[])) SELECT pg_notify')).length;
    await store.tokens.revokeClientTokens('mass-client');
    expect(await count(schema, 'client_id = $1', ['mass-client'])).toBe(0);
    expect(await count(schema, 'client_id = $1', ['other-client'])).toBe(20);
    const { rows } = await admin!.query<{ n: number }>(`SELECT count(*)::int AS n FROM "${schema}".grants WHERE revoked_at IS NOT NULL`);
    expect(rows[0]!.n, 'one revoked grant per refresh token').toBe(pairs);
    expect(texts.filter((text) => text.includes('token_hash = ANY($1::text[])) SELECT pg_notify')).length - deletesBefore).toBe(3);
    // The tombstone refuses a save authorized before the revocation, as before.
    const late = buildTokenPair({ clientId: 'mass-client', userId: 'user-1' });
    expect(await store.tokens.saveTokens(late.access, late.refresh, { authorizedAt: new Date(Date.now() - 1000) })).toBe(false);
  });

  it('revokeClientTokens for one user deletes that user\'s tokens in chunks and no other user\'s', async () => {
    const { store, schema } = await open();
    await seed(schema, 'mass-client', 'user-1', POSTGRES_REVOCATION_CHUNK);
    await seed(schema, 'mass-client', 'user-2', 5);
    await store.tokens.revokeClientTokens('mass-client', 'user-1');
    expect(await count(schema, 'user_id = $1', ['user-1'])).toBe(0);
    expect(await count(schema, 'user_id = $1', ['user-2'])).toBe(10);
  });
});
