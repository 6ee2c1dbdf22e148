// PostgreSQL clients, codes and consents: row mapping and the statements behind each contract method.
import type {
  AuthorizationCodeRecord,
  ClientChanges,
  ClientStore,
  CodeStore,
  ConsentRecord,
  ConsentStore,
  ConsumeResult,
  OAuthClient,
  TokenEndpointAuthMethod,
} from '../contract.js';
import type { PostgresTables } from './schema.js';
import { CLIENT_CHANGE_FIELDS, definedClientChanges } from '../store-policy.js';
import { prepareSql, type PostgresRunner, type PreparedSql } from './query.js';
import { createBatcher, earliest, judgedAlone, type BatcherLimits } from './batcher.js';
import { createBatchedLookup } from './batched-lookup.js';
import { dateOf, jsonRowSql, parseJsonRow } from './json-row.js';
import type { RevisionCopies } from '../revision-copies.js';

/** `findClient`'s row: the id, and the rest of the record as a JSON row (`CLIENT_RECORD`). */
interface ClientRow {
  client_id: string;
  r: string;
  /** The row version's `xmin` (findClient only): the copy's revision, which any UPDATE by any writer changes. */
  v?: string;
}

const CLIENT_COLUMNS =
  'client_id, client_secret_hash, name, flow, redirect_uris, allowed_scopes, require_pkce, credentials_issued_at, created_at, disabled, token_endpoint_auth_method, previous_client_secret_hash, previous_client_secret_expires_at';

/** Every column but the id, in the order `toClient` reads them. */
const CLIENT_RECORD = jsonRowSql([
  'client_secret_hash', 'name', 'flow', 'redirect_uris', 'allowed_scopes', 'require_pkce', ['credentials_issued_at', 'ms'],
  ['created_at', 'ms'], 'disabled', 'token_endpoint_auth_method', 'previous_client_secret_hash',
  ['previous_client_secret_expires_at', 'ms'],
]);

/** What a statement reading integrations selects (or returns). */
const CLIENT_SELECT = `client_id, ${CLIENT_RECORD} AS r`;

function toClient(row: ClientRow): OAuthClient {
  const [secretHash, name, flow, redirectUris, allowedScopes, requirePkce, issuedAt, createdAt, disabled, method, previousHash, previousExpiresAt] =
    parseJsonRow(row.r);
  return {
    clientId: row.client_id,
    clientSecretHash: secretHash as string,
    name: name as string,
    flow: flow as OAuthClient['flow'],
    redirectUris: redirectUris as string[],
    allowedScopes: allowedScopes as string[],
    requirePkce: requirePkce as boolean,
    credentialsIssuedAt: dateOf(issuedAt),
    createdAt: dateOf(createdAt),
    disabled: disabled as boolean,
    // Absent, not null, when unrestricted (NULL since migration 4): the contract keeps absence as absence.
    ...(method === null ? {} : { tokenEndpointAuthMethod: method as TokenEndpointAuthMethod }),
    // Both NULL: no previous secret in its grace period (migration 6).
    ...(previousHash === null || previousExpiresAt === null
      ? {}
      : { previousClientSecretHash: previousHash as string, previousClientSecretExpiresAt: dateOf(previousExpiresAt) }),
  };
}

/** The column each field of `ClientChanges` lives in, and how its value is bound. */
const CHANGE_COLUMNS: Readonly<Record<keyof ClientChanges, readonly [column: string, type: string]>> = {
  clientSecretHash: ['client_secret_hash', 'text'],
  name: ['name', 'text'],
  redirectUris: ['redirect_uris', 'text[]'],
  allowedScopes: ['allowed_scopes', 'text[]'],
  requirePkce: ['require_pkce', 'boolean'],
  disabled: ['disabled', 'boolean'],
  // null clears it: the one nullable column.
  tokenEndpointAuthMethod: ['token_endpoint_auth_method', 'text'],
  previousClientSecretHash: ['previous_client_secret_hash', 'text'],
  previousClientSecretExpiresAt: ['previous_client_secret_expires_at', 'timestamptz'],
};

/**
 * ClientStore on PostgreSQL. `findClient` calls made while a lookup is at the database go out together as
 * one SELECT when it returns (batched-lookup.ts): each batch is sent after every call in it was made,
 * so each answer is as fresh as a lookup of its own. `createClient` is an INSERT … ON CONFLICT DO NOTHING. `updateClient` is one
 * UPDATE that sets only the given columns: it takes the row lock and applies its SET to the newest row
 * version, so a disable and a secret rotation racing each other both survive (never a read-modify-write).
 * `listClients` orders by created_at, then client_id byte by byte (COLLATE "C": 'B' < 'a'). `deleteClient` is
 * one statement of data-modifying CTEs (the row, its codes, consents and tokens) that also notifies the
 * revocation feed's channel (the tokens went: every instance's bearer cache must drop them). Each integration
 * `findClient` reads is kept in `copies` with its row version's `xmin` (the store's `clientCopies` part), which
 * any UPDATE by any writer (another instance, a previous version, a DBA) changes, and which `saveTokens`
 * checks (migration 8).
 * @see RFC 6749 §2 (client registration), RFC 7009 §2.1.
 */
export function createPostgresClientStore(
  db: PostgresRunner,
  t: PostgresTables,
  feed: { readonly channel: string; bump(): void },
  batching: BatcherLimits,
  copies: RevisionCopies,
): Required<ClientStore> {
  const create = prepareSql(
    `INSERT INTO ${t.clients} (${CLIENT_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)
     ON CONFLICT (client_id) DO NOTHING RETURNING client_id`,
  );
  const list = prepareSql(`SELECT ${CLIENT_SELECT} FROM ${t.clients} ORDER BY created_at, client_id COLLATE "C"`);
  // One statement, so one atomic step: the row, and only if it existed, its codes, consents and tokens. The
  // channel is a checked hex name (revocation-feed.ts), so it can be spliced in as a literal.
  const remove = prepareSql(
    `WITH c AS (DELETE FROM ${t.clients} WHERE client_id = $1 RETURNING client_id),
       k AS (DELETE FROM ${t.codes} WHERE client_id = $1 AND EXISTS (SELECT 1 FROM c)),
       n AS (DELETE FROM ${t.consents} WHERE client_id = $1 AND EXISTS (SELECT 1 FROM c)),
       x AS (DELETE FROM ${t.tokens} WHERE client_id = $1 AND EXISTS (SELECT 1 FROM c))
     SELECT count(*)::text AS deleted FROM c, pg_notify('${feed.channel}', '') AS n`,
  );
  // The FOR UPDATE read takes the row lock and reads `disabled` under it: a disable that waited for another's commit
  // reads the row version that one wrote (READ COMMITTED re-reads a locked row), so only one finds it enabled. The
  // row is written only when something changes: a new version would void every instance's copy (its xmin) for
  // nothing. A disable changes something while a previous secret is left (a rotation made while disabled).
  const disable = prepareSql(
    `WITH before AS (
       SELECT client_id, disabled, previous_client_secret_hash IS NOT NULL OR previous_client_secret_expires_at IS NOT NULL AS previous
       FROM ${t.clients} WHERE client_id = $1 FOR UPDATE),
     changed AS (
       UPDATE ${t.clients} AS c SET disabled = true, previous_client_secret_hash = NULL, previous_client_secret_expires_at = NULL
       FROM before WHERE c.client_id = before.client_id AND (NOT before.disabled OR before.previous))
     SELECT CASE WHEN disabled THEN 'already_disabled' ELSE 'disabled' END AS outcome FROM before`,
  );
  // The same row lock for an enable: of concurrent enables, only one reads the row disabled.
  const enable = prepareSql(
    `WITH before AS (SELECT client_id, disabled FROM ${t.clients} WHERE client_id = $1 FOR UPDATE),
     changed AS (UPDATE ${t.clients} AS c SET disabled = false FROM before WHERE c.client_id = before.client_id AND before.disabled)
     SELECT CASE WHEN disabled THEN 'enabled' ELSE 'already_enabled' END AS outcome FROM before`,
  );
  /** One statement per set of changed fields (at most 127), prepared once per connection like the others. */
  const updates = new Map<string, PreparedSql>();
  function updateSql(fields: readonly (keyof ClientChanges)[]): PreparedSql {
    const signature = fields.join(',');
    let sql = updates.get(signature);
    if (!sql) {
      const set = fields.map((field, i) => `${CHANGE_COLUMNS[field][0]} = $${i + 2}::${CHANGE_COLUMNS[field][1]}`);
      sql = prepareSql(`UPDATE ${t.clients} SET ${set.join(', ')} WHERE client_id = $1 RETURNING ${CLIENT_SELECT}`);
      updates.set(signature, sql);
    }
    return sql;
  }

  const findClient = createBatchedLookup<ClientRow, OAuthClient>(db, {
    sql: (match) => `SELECT xmin::text AS v, ${CLIENT_SELECT} FROM ${t.clients} WHERE client_id ${match}`,
    keyOf: (row) => row.client_id,
    toRecord(row) {
      const client = toClient(row);
      copies.keep(client, row.v!);
      return client;
    },
  }, batching);

  return {
    findClient,
    async createClient(c) {
      const { rows } = await db.query(create, [
        c.clientId,
        c.clientSecretHash,
        c.name,
        c.flow,
        [...c.redirectUris],
        [...c.allowedScopes],
        c.requirePkce,
        c.credentialsIssuedAt,
        c.createdAt,
        c.disabled,
        c.tokenEndpointAuthMethod ?? null,
        c.previousClientSecretHash ?? null,
        c.previousClientSecretExpiresAt ?? null,
      ]);
      return rows.length === 1;
    },
    async updateClient(clientId, changes) {
      const defined = definedClientChanges(changes);
      const fields = CLIENT_CHANGE_FIELDS.filter((field) => defined[field] !== undefined);
      if (fields.length === 0) return findClient(clientId);
      const values = fields.map((field) => {
        const value = defined[field];
        return Array.isArray(value) ? [...(value as readonly string[])] : value;
      });
      copies.forget(clientId);
      const { rows } = await db.query<ClientRow>(updateSql(fields), [clientId, ...values]);
      return rows[0] ? toClient(rows[0]) : null;
    },
    async disableClient(clientId) {
      copies.forget(clientId);
      // Text, not a boolean: a host pool's type parsers may hand a boolean back as 't' or 'f', both truthy.
      const { rows } = await db.query<{ outcome: 'disabled' | 'already_disabled' }>(disable, [clientId]);
      return rows[0]?.outcome ?? null;
    },
    async enableClient(clientId) {
      copies.forget(clientId);
      // Text, not a boolean, as disableClient's.
      const { rows } = await db.query<{ outcome: 'enabled' | 'already_enabled' }>(enable, [clientId]);
      return rows[0]?.outcome ?? null;
    },
    async listClients() {
      const { rows } = await db.read<ClientRow>(list, []);
      return rows.map(toClient);
    },
    async deleteClient(clientId) {
      copies.forget(clientId);
      try {
        const { rows } = await db.query<{ deleted: string }>(remove, [clientId]);
        return rows[0]?.deleted === '1';
      } finally {
        // It deleted the integration's tokens: this instance's mark moves before the caller goes on.
        feed.bump();
      }
    },
  };
}

/** A consume's row: its outcome, the code, and the record as a JSON row (`codeRecord`; a replay's, its grant, client and user only). */
interface CodeRow {
  outcome: 'consumed' | 'replayed';
  code_hash: string;
  r: string;
}

const CODE_COLUMNS =
  'code_hash, grant_id, client_id, user_id, redirect_uri, scope, code_challenge, issuer, issued_at, expires_at';

/** The code's columns but its hash, in the order `toConsumeResult` reads them, each prefixed with `table`. */
function codeRecord(table: string): string {
  return jsonRowSql([
    `${table}grant_id`, `${table}client_id`, `${table}user_id`, `${table}redirect_uri`, `${table}scope`,
    `${table}code_challenge`, `${table}issuer`, [`${table}issued_at`, 'ms'], [`${table}expires_at`, 'ms'],
  ]);
}

/** In a FROM list: this statement's transaction commits without waiting for the WAL flush (see below). */
const RELAXED_COMMIT = "set_config('synchronous_commit', 'off', true) AS relaxed";

/**
 * CodeStore on PostgreSQL. consumeCode is one statement: the UPDATE … WHERE consumed_at IS NULL takes the
 * row lock, so of N concurrent calls exactly one updates the row; the others wait for it, re-check the
 * WHERE clause on the new row version, update nothing, and the second branch (which reads the
 * statement's snapshot) reports them as replays. One round trip, no check-then-act. Consumes made while one is
 * at the database go out together as the same statement over a set of codes (batcher.ts); a code asked for
 * twice in one batch is updated once, and its later calls are answered as the replays they are. A batch that
 * fails on contention with another instance's batch (a deadlock broken) is sent again call by call.
 *
 * A consume commits without waiting for its WAL to reach the disk (`synchronous_commit` off for its own
 * transaction only, `set_config(…, true)`): a consume's answer only leads to the tokens' save, whose
 * synchronous commit flushes the WAL up to its own record, and so the consume's, written before it. Tokens
 * issued on a consumed code are never durable while the consume is not (no token outlives a crash that forgot
 * its code was used), and a revocation of the grant, also synchronous, flushes it too. What a crash of the
 * database may undo is a consume that issued nothing (a wrong verifier or redirect_uri): that code is live again
 * until it expires, which gives away nothing a client holds. The code exchange then waits for one flush, not
 * two, as on SQLite (group-commit.ts, `ahead`).
 * @see RFC 6749 §4.1.2 ("The client MUST NOT use the authorization code more than once").
 */
export function createPostgresCodeStore(db: PostgresRunner, t: PostgresTables, batching: BatcherLimits): CodeStore {
  const save = prepareSql(`INSERT INTO ${t.codes} (${CODE_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`);
  // A replay reads only the grant, client and user: the first values of its JSON row, as of a consumed one.
  const consume = prepareSql(
    `WITH won AS (
       UPDATE ${t.codes} SET consumed_at = $2
       WHERE code_hash = $1 AND consumed_at IS NULL AND expires_at > $2
       RETURNING code_hash, ${codeRecord('')} AS r)
     SELECT 'consumed' AS outcome, code_hash, r FROM won, ${RELAXED_COMMIT}
     UNION ALL
     SELECT 'replayed' AS outcome, code_hash, json_build_array(grant_id, client_id, user_id)::text AS r FROM ${t.codes}
     WHERE code_hash = $1 AND expires_at > $2 AND NOT EXISTS (SELECT 1 FROM won)`,
  );
  // The keys as one array the UPDATE and the replay branch both match with = ANY: no join, no CTE of keys, so
  // the plan the database makes for each batch (a custom one: it costs an array it can read by its length)
  // takes less planning. A code listed twice still matches its row once.
  const consumeMany = prepareSql(
    `WITH won AS (
       UPDATE ${t.codes} c SET consumed_at = $2
       WHERE c.code_hash = ANY($1::text[]) AND c.consumed_at IS NULL AND c.expires_at > $2
       RETURNING c.code_hash, ${codeRecord('c.')} AS r)
     SELECT 'consumed' AS outcome, code_hash, r FROM won, ${RELAXED_COMMIT}
     UNION ALL
     SELECT 'replayed' AS outcome, c.code_hash, json_build_array(c.grant_id, c.client_id, c.user_id)::text AS r FROM ${t.codes} c
     WHERE c.code_hash = ANY($1::text[]) AND c.expires_at > $2
       AND NOT EXISTS (SELECT 1 FROM won WHERE won.code_hash = c.code_hash)`,
  );
  // A call is sent by its moment or not at all (batcher.ts): a consume sent has its whole queryTimeoutMs, since one
  // given up after it was sent may still have used the code up, and the client could not redeem it again.
  const consumeAlone = async (codeHash: string, sendBy: number): Promise<ConsumeResult<AuthorizationCodeRecord>> => {
    const { rows } = await db.query<CodeRow>(consume, [codeHash, new Date()], sendBy);
    return rows[0] ? toConsumeResult(rows[0]) : { kind: 'not_found' };
  };
  const consumeBatched = createBatcher<string, ConsumeResult<AuthorizationCodeRecord>>(async (hashes, sendBy) => {
    let rows: CodeRow[];
    try {
      if (hashes.length === 1) return [{ ok: true, value: await consumeAlone(hashes[0]!, sendBy[0]!) }];
      ({ rows } = await db.query<CodeRow>(consumeMany, [[...new Set(hashes)], new Date()], earliest(sendBy)));
    } catch (error) {
      if (hashes.length === 1 || !judgedAlone(error)) throw error;
      return hashes.map((hash, n) => ({ ok: true, value: consumeAlone(hash, sendBy[n]!) }));
    }
    const found = new Map(rows.map((row) => [row.code_hash, row]));
    const answered = new Set<string>();
    // In call order, as if one after the other: the first call for a code gets the row's outcome, every later
    // one finds it consumed (a replay), unless it was not found.
    return hashes.map((hash) => {
      const row = found.get(hash);
      if (!row) return { ok: true, value: { kind: 'not_found' } };
      const first = !answered.has(hash);
      answered.add(hash);
      return { ok: true, value: first ? toConsumeResult(row) : replayOf(parseJsonRow(row.r)) };
    });
  }, batching);
  return {
    async saveCode(r) {
      await db.query(save, [
        r.codeHash,
        r.grantId,
        r.clientId,
        r.userId,
        r.redirectUri,
        [...r.scope],
        r.codeChallenge,
        r.issuer,
        r.issuedAt,
        r.expiresAt,
      ]);
    },
    consumeCode: consumeBatched,
  };
}

/** A replay's answer from the grant, client and user its row leads with, as a consumed code's row does. */
function replayOf(values: readonly unknown[]): ConsumeResult<AuthorizationCodeRecord> {
  return { kind: 'replayed', grantId: values[0] as string, userId: values[2] as string, clientId: values[1] as string };
}

/** The answer of one consume from its row. */
function toConsumeResult(row: CodeRow): ConsumeResult<AuthorizationCodeRecord> {
  const values = parseJsonRow(row.r);
  if (row.outcome === 'replayed') return replayOf(values);
  const [grantId, clientId, userId, redirectUri, scope, codeChallenge, issuer, issuedAt, expiresAt] = values;
  return {
    kind: 'consumed',
    record: {
      codeHash: row.code_hash,
      grantId: grantId as string,
      clientId: clientId as string,
      userId: userId as string,
      redirectUri: redirectUri as string,
      scope: scope as string[],
      codeChallenge: codeChallenge as string | null,
      issuer: issuer as string,
      issuedAt: dateOf(issuedAt),
      expiresAt: dateOf(expiresAt),
    },
  };
}

/** A consent as a JSON row, in the order `toConsent` reads it. */
const CONSENT_RECORD = jsonRowSql(['user_id', 'client_id', 'scope', ['granted_at', 'ms']]);

function toConsent(row: { r: string }): ConsentRecord {
  const [userId, clientId, scope, grantedAt] = parseJsonRow(row.r);
  return { userId: userId as string, clientId: clientId as string, scope: scope as string[], grantedAt: dateOf(grantedAt) };
}

/** ConsentStore on PostgreSQL: upsert by (user_id, client_id). */
export function createPostgresConsentStore(db: PostgresRunner, t: PostgresTables): ConsentStore {
  const columns = 'user_id, client_id, scope, granted_at';
  const find = prepareSql(`SELECT ${CONSENT_RECORD} AS r FROM ${t.consents} WHERE user_id = $1 AND client_id = $2`);
  const save = prepareSql(
    `INSERT INTO ${t.consents} (${columns}) VALUES ($1, $2, $3, $4)
     ON CONFLICT (user_id, client_id) DO UPDATE SET scope = EXCLUDED.scope, granted_at = EXCLUDED.granted_at`,
  );
  const revoke = prepareSql(`DELETE FROM ${t.consents} WHERE user_id = $1 AND client_id = $2`);
  const list = prepareSql(
    `SELECT ${CONSENT_RECORD} AS r FROM ${t.consents} WHERE user_id = $1 ORDER BY granted_at, client_id COLLATE "C"`,
  );
  return {
    async findConsent(userId, clientId) {
      const { rows } = await db.read<{ r: string }>(find, [userId, clientId]);
      return rows[0] ? toConsent(rows[0]) : null;
    },
    async saveConsent(r) {
      await db.query(save, [r.userId, r.clientId, [...r.scope], r.grantedAt]);
    },
    async revokeConsent(userId, clientId) {
      await db.query(revoke, [userId, clientId]);
    },
    async listConsents(userId) {
      const { rows } = await db.read<{ r: string }>(list, [userId]);
      return rows.map(toConsent);
    },
  };
}
