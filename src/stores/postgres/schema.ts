// PostgreSQL schema: table names and the versioned, idempotent, concurrency-safe migrations.
import type { PostgresClient } from './driver.js';
import { postgresRevocationChannel } from './revocation-feed.js';

/** Fully qualified, quoted table names for one (schema, tablePrefix) pair. */
export interface PostgresTables {
  readonly schema: string;
  readonly migrations: string;
  readonly clients: string;
  readonly codes: string;
  readonly tokens: string;
  readonly grants: string;
  readonly consents: string;
  readonly signingKeys: string;
  /** One row per integration whose tokens were revoked: the latest moment, kept for the retention. */
  readonly clientRevocations: string;
  /** One row per (integration, user) whose tokens were revoked: the latest moment, kept for the retention. */
  readonly userRevocations: string;
  /** The function behind `saveTokens` up to 0.2 (migration 3): locks, checks the tombstones and inserts, in one call. */
  readonly saveTokens: string;
  /** The function behind `saveTokens` since migration 7: the same for a batch of calls, in one statement. */
  readonly saveTokensBatch: string;
  /** Counters of the rateLimits tier (migration 5). */
  readonly rateLimits: string;
  /** The revocation feed's channel (`postgresRevocationChannel`), which migration 10's trigger notifies. */
  readonly revocationChannel: string;
  /** The function behind migration 10's trigger. */
  readonly notifyTokensDeleted: string;
}

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]{0,40}$/;
const PREFIX = /^[A-Za-z0-9_]{0,20}$/;

/** Double-quotes an identifier that has already been checked against IDENTIFIER/PREFIX. */
function quote(name: string): string {
  return `"${name}"`;
}

/**
 * Validates `schema` and `tablePrefix` once (they are spliced into SQL, so only plain identifiers pass)
 * and builds the quoted table names.
 * @throws TypeError naming the offending option.
 */
export function createPostgresTables(schema: string, tablePrefix: string): PostgresTables {
  if (!IDENTIFIER.test(schema)) {
    throw new TypeError(`createPostgresStore: option "schema" must match ${IDENTIFIER} (got ${JSON.stringify(schema)})`);
  }
  if (!PREFIX.test(tablePrefix)) {
    throw new TypeError(
      `createPostgresStore: option "tablePrefix" must match ${PREFIX} (got ${JSON.stringify(tablePrefix)})`,
    );
  }
  const table = (name: string): string => `${quote(schema)}.${quote(tablePrefix + name)}`;
  return {
    schema: quote(schema),
    migrations: table('schema_migrations'),
    clients: table('clients'),
    codes: table('codes'),
    tokens: table('tokens'),
    grants: table('grants'),
    consents: table('consents'),
    signingKeys: table('signing_keys'),
    clientRevocations: table('client_revocations'),
    userRevocations: table('user_revocations'),
    saveTokens: table('save_tokens'),
    saveTokensBatch: table('save_tokens_batch'),
    rateLimits: table('rate_limits'),
    revocationChannel: postgresRevocationChannel(schema, tablePrefix),
    notifyTokensDeleted: table('notify_tokens_deleted'),
  };
}

interface Migration {
  readonly version: number;
  readonly name: string;
  readonly statements: (t: PostgresTables, prefix: string) => readonly string[];
}

/**
 * Append-only: a released migration is never edited, a change is a new version. Index names carry the
 * table prefix because PostgreSQL index names are unique per schema.
 */
const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'initial',
    statements: (t, p) => [
      `CREATE TABLE ${t.clients} (
        client_id text PRIMARY KEY,
        client_secret_hash text NOT NULL,
        name text NOT NULL,
        flow text NOT NULL,
        redirect_uris text[] NOT NULL,
        allowed_scopes text[] NOT NULL,
        require_pkce boolean NOT NULL,
        credentials_issued_at timestamptz NOT NULL,
        created_at timestamptz NOT NULL,
        disabled boolean NOT NULL)`,
      `CREATE INDEX "${p}clients_created_idx" ON ${t.clients} (created_at, client_id)`,
      // consumed_at stays set until the row expires, so a replay is told apart from an unknown code.
      `CREATE TABLE ${t.codes} (
        code_hash text PRIMARY KEY,
        grant_id text NOT NULL,
        client_id text NOT NULL,
        user_id text NOT NULL,
        redirect_uri text NOT NULL,
        scope text[] NOT NULL,
        code_challenge text,
        issuer text NOT NULL,
        expires_at timestamptz NOT NULL,
        consumed_at timestamptz)`,
      `CREATE INDEX "${p}codes_grant_idx" ON ${t.codes} (grant_id)`,
      `CREATE INDEX "${p}codes_expires_idx" ON ${t.codes} (expires_at)`,
      `CREATE TABLE ${t.tokens} (
        token_hash text PRIMARY KEY,
        kind text NOT NULL CHECK (kind IN ('access', 'refresh')),
        grant_id text NOT NULL,
        client_id text NOT NULL,
        user_id text,
        scope text[] NOT NULL,
        issuer text NOT NULL,
        expires_at timestamptz NOT NULL)`,
      `CREATE INDEX "${p}tokens_grant_idx" ON ${t.tokens} (grant_id)`,
      `CREATE INDEX "${p}tokens_client_idx" ON ${t.tokens} (client_id, user_id)`,
      `CREATE INDEX "${p}tokens_expires_idx" ON ${t.tokens} (expires_at)`,
      // One row per live or revoked grant. Its row lock serialises saveTokens against revokeGrant; a
      // revoked row (the tombstone) lives at least 24 h, a live one as long as its longest token.
      `CREATE TABLE ${t.grants} (
        grant_id text PRIMARY KEY,
        revoked_at timestamptz,
        expires_at timestamptz NOT NULL)`,
      `CREATE INDEX "${p}grants_expires_idx" ON ${t.grants} (expires_at)`,
      `CREATE TABLE ${t.consents} (
        user_id text NOT NULL,
        client_id text NOT NULL,
        scope text[] NOT NULL,
        granted_at timestamptz NOT NULL,
        PRIMARY KEY (user_id, client_id))`,
      `CREATE INDEX "${p}consents_user_idx" ON ${t.consents} (user_id, granted_at)`,
    ],
  },
  {
    version: 2,
    name: 'signing keys',
    statements: (t, p) => [
      // `initial` is true only for a first-start insert: the partial unique index lets exactly one of several
      // instances starting together insert it, in one statement, without a lock.
      `CREATE TABLE ${t.signingKeys} (
        kid text PRIMARY KEY,
        algorithm text NOT NULL,
        private_key_pem text NOT NULL,
        created_at timestamptz NOT NULL,
        initial boolean)`,
      `CREATE UNIQUE INDEX "${p}signing_keys_initial_idx" ON ${t.signingKeys} (initial) WHERE initial`,
    ],
  },
  {
    version: 3,
    name: 'store contract v1',
    statements: (t, p) => [
      // A code issued before this version has no recorded start: its expiry minus the longest code lifetime
      // (10 minutes, RFC 6749 §4.1.2) is the earliest it can have been issued, so revocations void it surely.
      `ALTER TABLE ${t.codes} ADD COLUMN issued_at timestamptz`,
      `UPDATE ${t.codes} SET issued_at = expires_at - interval '10 minutes'`,
      // Ids are compared and ordered byte by byte whatever the database's default collation: 'abc', 'ABC'
      // and 'abc ' are three ids, and ORDER BY … COLLATE "C" can use the indexes. Rebuilds their indexes once.
      `ALTER TABLE ${t.codes} ALTER COLUMN issued_at SET NOT NULL,
        ALTER COLUMN code_hash TYPE text COLLATE "C", ALTER COLUMN grant_id TYPE text COLLATE "C",
        ALTER COLUMN client_id TYPE text COLLATE "C", ALTER COLUMN user_id TYPE text COLLATE "C"`,
      `ALTER TABLE ${t.clients} ALTER COLUMN client_id TYPE text COLLATE "C"`,
      `ALTER TABLE ${t.tokens} ALTER COLUMN token_hash TYPE text COLLATE "C",
        ALTER COLUMN grant_id TYPE text COLLATE "C", ALTER COLUMN client_id TYPE text COLLATE "C",
        ALTER COLUMN user_id TYPE text COLLATE "C"`,
      `ALTER TABLE ${t.grants} ALTER COLUMN grant_id TYPE text COLLATE "C"`,
      `ALTER TABLE ${t.consents} ALTER COLUMN user_id TYPE text COLLATE "C",
        ALTER COLUMN client_id TYPE text COLLATE "C"`,
      `ALTER TABLE ${t.signingKeys} ALTER COLUMN kid TYPE text COLLATE "C"`,
      // The tombstones of revokeClientTokens: the latest moment of each revocation (saveTokens refuses
      // tokens authorized at or before it), kept until expires_at, then swept.
      `CREATE TABLE ${t.clientRevocations} (
        client_id text COLLATE "C" PRIMARY KEY,
        revoked_at timestamptz NOT NULL,
        expires_at timestamptz NOT NULL)`,
      `CREATE INDEX "${p}client_revocations_expires_idx" ON ${t.clientRevocations} (expires_at)`,
      `CREATE TABLE ${t.userRevocations} (
        client_id text COLLATE "C" NOT NULL,
        user_id text COLLATE "C" NOT NULL,
        revoked_at timestamptz NOT NULL,
        expires_at timestamptz NOT NULL,
        PRIMARY KEY (client_id, user_id))`,
      `CREATE INDEX "${p}user_revocations_expires_idx" ON ${t.userRevocations} (expires_at)`,
      // saveTokens in one round trip (see createPostgresTokenStore for the locking scheme). VOLATILE: in READ
      // COMMITTED each statement after the locks takes a new snapshot, so the checks see every revocation
      // that held the lock. Under another isolation level the snapshot would predate the wait: refuse to run.
      `CREATE FUNCTION ${t.saveTokens}(
        p_grant_id text, p_grant_expires_at timestamptz, p_client_id text, p_user_id text,
        p_authorized_at timestamptz, p_now timestamptz, p_client_key bigint, p_user_key bigint,
        p_access text, p_access_scope text[], p_access_issuer text, p_access_expires_at timestamptz,
        p_refresh text, p_refresh_scope text[], p_refresh_issuer text, p_refresh_expires_at timestamptz)
      RETURNS boolean LANGUAGE plpgsql VOLATILE AS $fn$
      BEGIN
        IF current_setting('transaction_isolation') <> 'read committed' THEN
          RAISE EXCEPTION 'express-oauth-router: saveTokens must run in READ COMMITTED, not %',
            current_setting('transaction_isolation');
        END IF;
        PERFORM pg_advisory_xact_lock_shared(p_client_key);
        IF p_user_id IS NOT NULL THEN
          PERFORM pg_advisory_xact_lock_shared(p_user_key);
        END IF;
        IF EXISTS (SELECT 1 FROM ${t.clientRevocations} r WHERE r.client_id = p_client_id
              AND r.revoked_at >= p_authorized_at AND r.expires_at > p_now)
            OR EXISTS (SELECT 1 FROM ${t.userRevocations} r WHERE r.client_id = p_client_id
              AND r.user_id = p_user_id AND r.revoked_at >= p_authorized_at AND r.expires_at > p_now) THEN
          RETURN false;
        END IF;
        -- The grant's row lock orders this against revokeGrant; ON CONFLICT judges the newest row version.
        -- A tombstone past its retention counts as absent, like every expired record.
        INSERT INTO ${t.grants} AS g (grant_id, expires_at) VALUES (p_grant_id, p_grant_expires_at)
        ON CONFLICT (grant_id) DO UPDATE SET revoked_at = NULL, expires_at = CASE WHEN g.revoked_at IS NULL
          THEN GREATEST(g.expires_at, EXCLUDED.expires_at) ELSE EXCLUDED.expires_at END
        WHERE g.revoked_at IS NULL OR g.expires_at <= p_now;
        IF NOT FOUND THEN
          RETURN false;
        END IF;
        INSERT INTO ${t.tokens} (token_hash, kind, grant_id, client_id, user_id, scope, issuer, expires_at)
        SELECT v.* FROM (VALUES
          (p_access, 'access', p_grant_id, p_client_id, p_user_id, p_access_scope, p_access_issuer, p_access_expires_at),
          (p_refresh, 'refresh', p_grant_id, p_client_id, p_user_id, p_refresh_scope, p_refresh_issuer, p_refresh_expires_at)
        ) AS v(token_hash, kind, grant_id, client_id, user_id, scope, issuer, expires_at)
        WHERE v.token_hash IS NOT NULL;
        RETURN true;
      END
      $fn$`,
    ],
  },
  {
    version: 4,
    name: 'client authentication method',
    // RFC 7591 `token_endpoint_auth_method`. NULL, what every existing row gets, means any method the server
    // allows, so integrations keep working as they did; a process of the previous version names its columns
    // and never sees it. A nullable ADD COLUMN without a default rewrites no rows and locks only briefly.
    statements: (t) => [`ALTER TABLE ${t.clients} ADD COLUMN token_endpoint_auth_method text`],
  },
  {
    version: 5,
    name: 'rate limit counters',
    // Counters of failed sign-ins and client authentications (see rate-limits.ts). UNLOGGED: a counter is
    // worth nothing after a crash, and skipping the WAL keeps a flood of failures from loading it. Keys are
    // hashes the router builds, compared byte by byte.
    statements: (t, p) => [
      `CREATE UNLOGGED TABLE ${t.rateLimits} (
        key text COLLATE "C" PRIMARY KEY,
        count integer NOT NULL,
        expires_at timestamptz NOT NULL)`,
      `CREATE INDEX "${p}rate_limits_expires_idx" ON ${t.rateLimits} (expires_at)`,
    ],
  },
  {
    version: 6,
    name: 'previous client secret',
    // The secret a planned rotation replaced and until when it still authenticates (the grace period). NULL,
    // what every existing row gets, means none; a process of the previous version names its columns and
    // never sees them. Nullable ADD COLUMNs without defaults rewrite no rows.
    statements: (t) => [
      `ALTER TABLE ${t.clients} ADD COLUMN previous_client_secret_hash text`,
      `ALTER TABLE ${t.clients} ADD COLUMN previous_client_secret_expires_at timestamptz`,
    ],
  },
  {
    version: 7,
    name: 'batched token saves',
    // save_tokens for many calls in one statement (see createPostgresTokenStore): the calls a busy store
    // gathered while its last save was at the database, judged set by set in four statements, each with a
    // snapshot of its own (VOLATILE, READ COMMITTED) taken after the one before: the locks of every call,
    // then the tombstones of the calls that got them, then the grant rows in grant order (two batches lock
    // the rows they share in one order), then the tokens of the calls whose grant row was written. Unless
    // p_wait (one call only), a call whose lock is taken is not waited for: it comes back 'busy' and is sent
    // again alone with p_wait, so a long revocation of one integration never holds up the calls of others
    // that share its batch. save_tokens stays for instances of the previous version.
    statements: (t) => [saveTokensBatchSql(t, 'CREATE FUNCTION', existsRefusals(t, ''))],
  },
  {
    version: 8,
    name: 'token saves check the integration copy',
    // The same function, with one more refusal: an item that carries the revision (xmin) of the integration
    // copy its request was authenticated with is refused when the clients row is no longer that version, or
    // gone (the store's `clientCopies` part). Same signature, so instances of the previous version, whose items
    // carry no revision, keep calling it as before.
    statements: (t) => [saveTokensBatchSql(t, 'CREATE OR REPLACE FUNCTION', existsRefusals(t, `
            OR (x.client_revision IS NOT NULL AND NOT EXISTS (SELECT 1 FROM ${t.clients} c
              WHERE c.client_id = x.client_id AND c.xmin = x.client_revision::xid))`), ', client_revision text')],
  },
  {
    version: 9,
    name: 'token saves probe by key, write no grant row for a new grant; codes and consents by integration',
    // The same function, the same refusals, two changes. Each refusal is now a scalar subquery on its table's key:
    // as EXISTS inside OR, the planner could judge every call of a batch with one hashed scan of the whole table
    // (it counts on 100 items, the set function's estimate), and did: with 20,000 integrations a save read them
    // all, 1.5–2.2 ms of the database's CPU against 0.07–0.08. And an item may now say its grant is new
    // (`SaveTokensOptions.newGrant`: minted by its request and named nowhere yet, so no revokeGrant can race it):
    // it writes no grant row, whose only purpose is that ordering, and its grant's tombstone is read with the
    // other refusals. Same signature: items of instances of the previous version say nothing of it, and are saved
    // as before.
    // And an integration's codes and consents are found by its id: deleting an integration read both tables whole.
    statements: (t, p) => [
      saveTokensBatchSql(t, 'CREATE OR REPLACE FUNCTION', keyedRefusals(t), ', client_revision text, grant_id text, new_grant boolean', true),
      `CREATE INDEX "${p}codes_client_idx" ON ${t.codes} (client_id)`,
      `CREATE INDEX "${p}consents_client_idx" ON ${t.consents} (client_id)`,
    ],
  },
  {
    version: 10,
    name: 'every deletion of live tokens notifies the revocation feed',
    // The store's own deleting statements notify the feed's channel themselves. A trigger makes every other deletion
    // of a live token do so too, in the deleting transaction, at its COMMIT: an instance of a version without the
    // feed (0.2.0) running beside this one during an upgrade, an operator's DELETE by hand. Deletions of expired
    // rows only (the sweeper) notify nothing: no cache serves an expired token. A second notification of the same
    // channel and payload in one transaction is delivered once, so the store's own statements cost nothing more.
    // The channel is a checked hex name (revocation-feed.ts), spliced in as a literal.
    statements: (t, p) => [
      `CREATE FUNCTION ${t.notifyTokensDeleted}() RETURNS trigger LANGUAGE plpgsql AS $fn$
      BEGIN
        IF EXISTS (SELECT 1 FROM gone WHERE gone.expires_at > now()) THEN
          PERFORM pg_notify('${t.revocationChannel}', '');
        END IF;
        RETURN NULL;
      END
      $fn$`,
      `CREATE TRIGGER "${p}tokens_deleted_notify" AFTER DELETE ON ${t.tokens}
        REFERENCING OLD TABLE AS gone FOR EACH STATEMENT EXECUTE FUNCTION ${t.notifyTokensDeleted}()`,
    ],
  },
];

/** The refusals of migrations 7 and 8 (`more`: 8's revision check): EXISTS subqueries. */
function existsRefusals(t: PostgresTables, more: string): string {
  return `
            EXISTS (SELECT 1 FROM ${t.clientRevocations} r WHERE r.client_id = x.client_id
              AND r.revoked_at >= x.authorized_at AND r.expires_at > p_now)
            OR EXISTS (SELECT 1 FROM ${t.userRevocations} r WHERE r.client_id = x.client_id
              AND r.user_id = x.user_id AND r.revoked_at >= x.authorized_at AND r.expires_at > p_now)${more}`;
}

/**
 * Migration 9's refusals: each a scalar subquery reading at most one row by its table's primary key (true when it
 * refuses, NULL when no row does), which PostgreSQL runs per item and never turns into a scan of the table. The
 * revision check refuses a missing clients row (NULL IS NOT FALSE) and one of another version.
 */
function keyedRefusals(t: PostgresTables): string {
  return `
            (SELECT r.revoked_at >= x.authorized_at FROM ${t.clientRevocations} r
              WHERE r.client_id = x.client_id AND r.expires_at > p_now)
            OR (SELECT r.revoked_at >= x.authorized_at FROM ${t.userRevocations} r
              WHERE r.client_id = x.client_id AND r.user_id = x.user_id AND r.expires_at > p_now)
            OR (x.client_revision IS NOT NULL AND (SELECT c.xmin <> x.client_revision::xid FROM ${t.clients} c
              WHERE c.client_id = x.client_id) IS NOT FALSE)
            OR (x.new_grant AND (SELECT g.revoked_at IS NOT NULL FROM ${t.grants} g
              WHERE g.grant_id = x.grant_id AND g.expires_at > p_now))`;
}

/**
 * The `save_tokens_batch` function (migration 7; migration 8 adds a refusal; migration 9 rewrites them, `refusals`,
 * and adds `newGrants`). The calls a busy store gathered while its last save was at the database, judged set by set in
 * four statements, each with a snapshot of its own (VOLATILE, READ COMMITTED) taken after the one before: the
 * locks of every call, then the tombstones of the calls that got them, then the grant rows in grant order (two
 * batches lock the rows they share in one order), then the tokens of the calls whose grant row was written.
 * With `newGrants`, a call whose item has `new_grant` true writes no grant row: its grant's tombstone is checked
 * with the others, and the call counts as granted.
 */
function saveTokensBatchSql(t: PostgresTables, create: string, refusals: string, refusalColumns = '', newGrants = false): string {
  const items = (columns: string): string => `jsonb_to_recordset(p_items) AS x(i integer, ${columns})`;
  const open = 'x.i <> ALL (v_busy) AND x.i <> ALL (v_refused)';
  const oldGrantsOnly = newGrants ? ' AND x.new_grant IS NOT TRUE' : '';
  const granted = newGrants ? `(SELECT grant_id FROM written
            UNION ALL SELECT x.grant_id FROM ${items('grant_id text, new_grant boolean')} WHERE ${open} AND x.new_grant) AS granted`
    : 'written';
  return `${create} ${t.saveTokensBatch}(p_items jsonb, p_now timestamptz, p_wait boolean)
        RETURNS text[] LANGUAGE plpgsql VOLATILE AS $fn$
        DECLARE
          v_busy integer[] := '{}';
          v_refused integer[];
          v_granted text[];
          v_results text[];
        BEGIN
          IF current_setting('transaction_isolation') <> 'read committed' THEN
            RAISE EXCEPTION 'express-oauth-router: saveTokens must run in READ COMMITTED, not %',
              current_setting('transaction_isolation');
          END IF;
          IF p_wait THEN
            IF jsonb_array_length(p_items) <> 1 THEN
              RAISE EXCEPTION 'express-oauth-router: only a save of its own waits for its locks';
            END IF;
            PERFORM pg_advisory_xact_lock_shared(x.client_key) FROM ${items('client_key bigint')};
            PERFORM pg_advisory_xact_lock_shared(x.user_key) FROM ${items('user_id text, user_key bigint')}
              WHERE x.user_id IS NOT NULL;
          ELSE
            -- A strict function: a NULL key (no user) is NULL, and TRUE OR NULL is TRUE.
            SELECT coalesce(array_agg(x.i), '{}') INTO v_busy FROM ${items('client_key bigint, user_id text, user_key bigint')}
            WHERE NOT (pg_try_advisory_xact_lock_shared(x.client_key)
              AND (x.user_id IS NULL OR pg_try_advisory_xact_lock_shared(x.user_key)));
          END IF;
          SELECT coalesce(array_agg(x.i), '{}') INTO v_refused
          FROM ${items(`client_id text, user_id text, authorized_at timestamptz${refusalColumns}`)}
          WHERE x.i <> ALL (v_busy) AND (${refusals});
          -- The grant's row lock orders this against revokeGrant; ON CONFLICT judges the newest row version.
          -- A tombstone past its retention counts as absent, like every expired record.
          WITH written AS (
            INSERT INTO ${t.grants} AS g (grant_id, expires_at)
            SELECT x.grant_id, max(x.grant_expires_at) FROM ${items(`grant_id text, grant_expires_at timestamptz${newGrants ? ', new_grant boolean' : ''}`)}
            WHERE ${open}${oldGrantsOnly} GROUP BY x.grant_id ORDER BY x.grant_id COLLATE "C"
            ON CONFLICT (grant_id) DO UPDATE SET revoked_at = NULL, expires_at = CASE WHEN g.revoked_at IS NULL
              THEN GREATEST(g.expires_at, EXCLUDED.expires_at) ELSE EXCLUDED.expires_at END
            WHERE g.revoked_at IS NULL OR g.expires_at <= p_now
            RETURNING g.grant_id)
          SELECT coalesce(array_agg(grant_id), '{}') INTO v_granted FROM ${granted};
          INSERT INTO ${t.tokens} (token_hash, kind, grant_id, client_id, user_id, scope, issuer, expires_at)
          SELECT w.* FROM ${items(`grant_id text, client_id text, user_id text,
              access text, access_scope jsonb, access_issuer text, access_expires_at timestamptz,
              refresh text, refresh_scope jsonb, refresh_issuer text, refresh_expires_at timestamptz`)}
          CROSS JOIN LATERAL (VALUES
            (x.access, 'access', x.grant_id, x.client_id, x.user_id,
              ARRAY(SELECT jsonb_array_elements_text(x.access_scope)), x.access_issuer, x.access_expires_at),
            (x.refresh, 'refresh', x.grant_id, x.client_id, x.user_id,
              ARRAY(SELECT jsonb_array_elements_text(x.refresh_scope)), x.refresh_issuer, x.refresh_expires_at)
          ) AS w(token_hash, kind, grant_id, client_id, user_id, scope, issuer, expires_at)
          WHERE ${open} AND x.grant_id = ANY (v_granted) AND w.token_hash IS NOT NULL;
          SELECT array_agg(CASE WHEN x.i = ANY (v_busy) THEN 'busy'
              WHEN x.i = ANY (v_refused) OR x.grant_id <> ALL (v_granted) THEN 'refused' ELSE 'saved' END ORDER BY x.i)
            INTO v_results FROM ${items('grant_id text')};
          RETURN v_results;
        END
        $fn$`;
}

/** The newest schema version this code knows. */
export const POSTGRES_SCHEMA_VERSION = MIGRATIONS.length;

/**
 * Brings the schema to POSTGRES_SCHEMA_VERSION inside one transaction. A transaction-scoped advisory lock
 * keyed on the schema name makes concurrent starts queue up instead of racing on CREATE (two
 * `CREATE SCHEMA IF NOT EXISTS` in parallel can still fail with a unique violation); the second one then
 * finds every version applied and does nothing. Refuses to run against a schema newer than this code.
 * @param targetVersion stop at this version (tests use it to build an older schema to upgrade).
 * @throws Error when the database schema is newer than this package.
 */
export async function migratePostgresSchema(
  client: PostgresClient,
  tables: PostgresTables,
  lockName: string,
  tablePrefix: string,
  targetVersion: number = POSTGRES_SCHEMA_VERSION,
): Promise<void> {
  // READ COMMITTED whatever the host's default: the version read after the lock must include what the
  // instance we waited for committed (REPEATABLE READ would read it from a snapshot taken before the wait).
  await client.query('BEGIN ISOLATION LEVEL READ COMMITTED');
  try {
    await client.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [lockName]);
    await client.query(`CREATE SCHEMA IF NOT EXISTS ${tables.schema}`);
    await client.query(
      `CREATE TABLE IF NOT EXISTS ${tables.migrations} (
        version integer PRIMARY KEY,
        name text NOT NULL,
        applied_at timestamptz NOT NULL DEFAULT now())`,
    );
    // As text: the host's pool may parse integers its own way (json-row.ts).
    const { rows } = await client.query<{ version: string }>(
      `SELECT coalesce(max(version), 0)::text AS version FROM ${tables.migrations}`,
    );
    const current = Number(rows[0]?.version ?? 0);
    if (current > POSTGRES_SCHEMA_VERSION) {
      throw new Error(
        `oauth schema ${tables.schema} is at version ${current}, newer than this package (${POSTGRES_SCHEMA_VERSION}); upgrade express-oauth-router`,
      );
    }
    for (const migration of MIGRATIONS) {
      if (migration.version <= current || migration.version > targetVersion) continue;
      for (const statement of migration.statements(tables, tablePrefix)) await client.query(statement);
      await client.query(`INSERT INTO ${tables.migrations} (version, name) VALUES ($1, $2)`, [
        migration.version,
        migration.name,
      ]);
    }
    await client.query('COMMIT');
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  }
}
