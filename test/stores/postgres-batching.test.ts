// PostgreSQL store under load: calls made while the database is busy share one statement, and each is judged as it would be alone.
import pg from 'pg';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createPostgresStore, type PostgresStore } from '../../src/stores/postgres/index.js';
import { disposeOpened, type OpenedPostgresStore } from '../helpers/postgres-opened.js';
import { createPostgresTables } from '../../src/stores/postgres/schema.js';
import { createRevocationLockKeys } from '../../src/stores/postgres/tokens.js';
import { buildClient, buildCode, buildToken, buildTokenPair, justExpired, secondsFromNow } from '../../src/testing/conformance-fixtures.js';

const url = process.env.OAUTH_TEST_POSTGRES_URL ?? '';
if (!url) console.info('PostgreSQL batching tests skipped: set OAUTH_TEST_POSTGRES_URL to run them');

const admin = url ? new pg.Pool({ connectionString: url, max: 4 }) : null;
const opened: OpenedPostgresStore[] = [];

/** The statements a store sent, by what they call: its pool is the host's, counted on the way out. */
interface Counted {
  readonly store: PostgresStore;
  readonly schema: string;
  /** Statements sent so far whose text contains `fragment`. */
  sent(fragment: string): number;
}

async function openCounted(): Promise<Counted> {
  const schema = `oauth_b${process.pid}_${Math.random().toString(36).slice(2, 10)}`;
  const pool = new pg.Pool({ connectionString: url, max: 10, connectionTimeoutMillis: 5000 });
  const texts: string[] = [];
  // Counted on each pooled connection, which every statement goes through: the store's reads take a connection of
  // their own (to send a read again on another one), its writes go through pool.query.
  pool.on('connect', (client) => {
    const query = client.query.bind(client) as (...args: unknown[]) => unknown;
    (client as unknown as { query: (...args: unknown[]) => unknown }).query = (config: unknown, ...rest: unknown[]) => {
      texts.push(typeof config === 'string' ? config : String((config as { text?: string }).text));
      return query(config, ...rest);
    };
  });
  const store = await createPostgresStore({ pool, schema, sweepIntervalSeconds: 0 });
  // Only the calls a test makes: not the schema's creation, whose function bodies name the statements counted.
  texts.length = 0;
  opened.push({ store, pool, schema });
  return { store, schema, sent: (fragment) => texts.filter((text) => text.includes(fragment)).length };
}

/** Settles `promise` into a flag, so a test can tell whether it has answered yet. */
function track<T>(promise: Promise<T>): { done: () => boolean; promise: Promise<T> } {
  let settled = false;
  const tracked = promise.finally(() => {
    settled = true;
  });
  tracked.catch(() => undefined);
  return { done: () => settled, promise: tracked };
}

describe.skipIf(!url)('PostgreSQL store, batched calls (DESIGN §3a, RFC 7009 §2.1)', () => {
  afterEach(async () => {
    await disposeOpened(opened, admin!);
  });
  afterAll(async () => {
    await admin?.end();
  });

  it('a quiet store sends each call at once, on its own', async () => {
    const { store, sent } = await openCounted();
    const { client } = buildClient();
    await store.clients.createClient(client);
    for (let i = 0; i < 3; i += 1) {
      expect(await store.clients.findClient(client.clientId)).toEqual(client);
      expect(await store.tokens.saveTokens(buildToken({ clientId: client.clientId }), null, { authorizedAt: new Date() })).toBe(true);
    }
    expect(sent('save_tokens_batch')).toBe(3);
    // One key: the statement whose generic plan PostgreSQL keeps (postgres-plans.test.ts).
    expect(sent('client_id = $1')).toBe(3);
    expect(sent('= ANY($1::text[])')).toBe(0);
  });

  it('saves made while one is at the database go out together, and every one is stored', async () => {
    const { store, sent } = await openCounted();
    const tokens = Array.from({ length: 30 }, (_, i) => buildTokenPair({ userId: i % 3 ? `user-${i}` : null }));
    const results = await Promise.all(
      tokens.map(({ access, refresh }, i) => store.tokens.saveTokens(access, i % 2 ? refresh : null, { authorizedAt: new Date() })),
    );
    expect(results).toEqual(tokens.map(() => true));
    // The first call finds the store idle and goes alone; the 29 made meanwhile share the next statement.
    expect(sent('save_tokens_batch')).toBe(2);
    for (const [i, { access, refresh }] of tokens.entries()) {
      expect(await store.tokens.findAccessToken(access.tokenHash)).toEqual(access);
      expect(await store.tokens.findRefreshToken(refresh.tokenHash)).toEqual(i % 2 ? refresh : null);
    }
  });

  it('lookups made while one is at the database share one SELECT, and each caller gets objects of its own', async () => {
    const { store, sent } = await openCounted();
    const first = buildClient().client;
    const second = buildClient({ redirectUris: ['https://b.example/cb'] }).client;
    await store.clients.createClient(first);
    await store.clients.createClient(second);
    const ids = [first.clientId, second.clientId, second.clientId, 'unknown', first.clientId];
    const found = await Promise.all([store.clients.findClient(first.clientId), ...ids.map((id) => store.clients.findClient(id))]);
    expect(found).toEqual([first, first, second, second, null, first]);
    // The first alone, by its one key; the five made meanwhile in one SELECT of their three keys.
    expect(sent('client_id = $1')).toBe(1);
    expect(sent('client_id = ANY($1::text[])')).toBe(1);
    // Two calls for one id in one batch: changing what one got leaves the other's answer as it was.
    (found[2]!.redirectUris as string[]).push('https://evil.example/cb');
    found[2]!.createdAt.setTime(0);
    expect(found[3]!.redirectUris).toEqual(['https://b.example/cb']);
    expect(found[3]!.createdAt).toEqual(second.createdAt);
  });

  it('consumes made while one is at the database share one statement; a code asked for twice in it is consumed once (RFC 6749 §4.1.2)', async () => {
    const { store, sent } = await openCounted();
    const [first, second, primerCode] = [buildCode(), buildCode(), buildCode()];
    const expired = buildCode({ expiresAt: justExpired() });
    for (const code of [first, second, primerCode, expired]) await store.codes.saveCode(code);
    const primer = store.codes.consumeCode(primerCode.codeHash);
    const results = await Promise.all(
      [first, second, first, buildCode(), expired, first].map((code) => store.codes.consumeCode(code.codeHash)),
    );
    expect((await primer).kind).toBe('consumed');
    expect(results).toEqual([
      { kind: 'consumed', record: first },
      { kind: 'consumed', record: second },
      { kind: 'replayed', grantId: first.grantId, userId: first.userId, clientId: first.clientId },
      { kind: 'not_found' },
      { kind: 'not_found' },
      { kind: 'replayed', grantId: first.grantId, userId: first.userId, clientId: first.clientId },
    ]);
    expect(sent('c.code_hash = ANY($1::text[])')).toBe(1);
    // And afterwards, alone: a replay.
    expect(await store.codes.consumeCode(second.codeHash)).toEqual({ kind: 'replayed', grantId: second.grantId, userId: second.userId, clientId: second.clientId });
  });

  it('token lookups made while one is at the database share one SELECT; expired and unknown tokens read absent', async () => {
    const { store, sent } = await openCounted();
    const { access, refresh } = buildTokenPair();
    const expired = buildToken({ expiresAt: justExpired() });
    await store.tokens.saveTokens(access, refresh, { authorizedAt: new Date() });
    await store.tokens.saveTokens(expired, null, { authorizedAt: new Date() });
    const primer = store.tokens.findAccessToken(access.tokenHash);
    const found = await Promise.all([
      store.tokens.findAccessToken(access.tokenHash),
      store.tokens.findAccessToken(refresh.tokenHash),
      store.tokens.findAccessToken(expired.tokenHash),
      store.tokens.findAccessToken(access.tokenHash),
      store.tokens.findRefreshToken(refresh.tokenHash),
    ]);
    expect(await primer).toEqual(access);
    expect(found).toEqual([access, null, null, access, refresh]);
    expect(sent("kind = 'access'")).toBe(2);
    expect(sent('token_hash = ANY($1::text[])')).toBe(1);
    (found[0]!.scope as string[]).push('admin');
    found[0]!.expiresAt.setTime(0);
    expect(found[3]).toEqual(access);
  });

  it('a call whose integration a revocation holds is judged after that revocation commits; the rest of its batch does not wait', async () => {
    const { store, schema } = await openCounted();
    const held = buildToken({ userId: null });
    const other = buildToken({ userId: null });
    const authorizedAt = new Date();
    const key = createRevocationLockKeys(createPostgresTables(schema, '').tokens).client(held.clientId);
    // A revocation of `held`'s integration, in flight: its lock taken, its tombstone written, not yet committed.
    const revocation = await admin!.connect();
    try {
      await revocation.query('BEGIN');
      await revocation.query('SELECT pg_advisory_xact_lock($1::bigint)', [String(key)]);
      await revocation.query(
        `INSERT INTO "${schema}".client_revocations (client_id, revoked_at, expires_at) VALUES ($1, $2, $3)`,
        [held.clientId, secondsFromNow(1), secondsFromNow(3600)],
      );
      const primer = store.tokens.saveTokens(buildToken(), null, { authorizedAt });
      const blocked = track(store.tokens.saveTokens(held, null, { authorizedAt }));
      const free = store.tokens.saveTokens(other, null, { authorizedAt });
      expect(await primer).toBe(true);
      expect(await free).toBe(true);
      expect(blocked.done()).toBe(false);
      await revocation.query('COMMIT');
      // Saved before the revocation would have deleted it; after it, the tombstone refuses it.
      expect(await blocked.promise).toBe(false);
      expect(await store.tokens.findAccessToken(held.tokenHash)).toBeNull();
      expect(await store.tokens.findAccessToken(other.tokenHash)).toEqual(other);
    } finally {
      await revocation.query('ROLLBACK').catch(() => undefined);
      revocation.release();
    }
  });

  it('a call held by a revocation that rolls back is saved once the lock is free', async () => {
    const { store, schema } = await openCounted();
    const held = buildToken();
    const key = createRevocationLockKeys(createPostgresTables(schema, '').tokens).user(held.clientId, held.userId!);
    const revocation = await admin!.connect();
    try {
      await revocation.query('BEGIN');
      await revocation.query('SELECT pg_advisory_xact_lock($1::bigint)', [String(key)]);
      const primer = store.tokens.saveTokens(buildToken(), null, { authorizedAt: new Date() });
      const blocked = track(store.tokens.saveTokens(held, null, { authorizedAt: new Date() }));
      expect(await primer).toBe(true);
      expect(blocked.done()).toBe(false);
      await revocation.query('ROLLBACK');
      expect(await blocked.promise).toBe(true);
      expect(await store.tokens.findAccessToken(held.tokenHash)).toEqual(held);
    } finally {
      revocation.release();
    }
  });

  it('in one batch, a call for a revoked grant is refused and the others are saved', async () => {
    const { store, sent } = await openCounted();
    const revoked = buildToken();
    await store.tokens.revokeGrant(revoked.grantId);
    const { client } = buildClient();
    const userRevoked = buildToken({ clientId: client.clientId, userId: 'user-r' });
    const before = new Date(Date.now() - 1000);
    await store.tokens.revokeClientTokens(client.clientId, 'user-r');
    const kept = [buildToken(), buildToken({ clientId: client.clientId, userId: 'user-k' })];
    const primer = store.tokens.saveTokens(buildToken(), null, { authorizedAt: new Date() });
    const results = await Promise.all([
      store.tokens.saveTokens(revoked, null, { authorizedAt: new Date() }),
      store.tokens.saveTokens(kept[0]!, null, { authorizedAt: new Date() }),
      store.tokens.saveTokens(userRevoked, null, { authorizedAt: before }),
      store.tokens.saveTokens(kept[1]!, null, { authorizedAt: before }),
    ]);
    expect(await primer).toBe(true);
    expect(results).toEqual([false, true, false, true]);
    expect(sent('save_tokens_batch')).toBe(2);
    expect(await store.tokens.findAccessToken(revoked.tokenHash)).toBeNull();
    expect(await store.tokens.findAccessToken(userRevoked.tokenHash)).toBeNull();
    for (const token of kept) expect(await store.tokens.findAccessToken(token.tokenHash)).toEqual(token);
  });

  it('two calls for one grant in one batch (two refreshes at once) are both saved, and the grant keeps the later expiry', async () => {
    const { store, schema } = await openCounted();
    const { access, refresh } = buildTokenPair();
    expect(await store.tokens.saveTokens(access, refresh, { authorizedAt: new Date() })).toBe(true);
    const same = { grantId: access.grantId, clientId: access.clientId, userId: access.userId };
    const refreshed = [buildToken({ ...same, expiresAt: secondsFromNow(7200) }), buildToken({ ...same, expiresAt: secondsFromNow(9000) })];
    const primer = store.tokens.saveTokens(buildToken(), null, { authorizedAt: new Date() });
    const results = await Promise.all(refreshed.map((token) => store.tokens.saveTokens(token, null, { authorizedAt: new Date() })));
    expect(await primer).toBe(true);
    expect(results).toEqual([true, true]);
    for (const token of refreshed) expect(await store.tokens.findAccessToken(token.tokenHash)).toEqual(token);
    const { rows } = await admin!.query(`SELECT expires_at FROM "${schema}".grants WHERE grant_id = $1`, [access.grantId]);
    expect(rows[0].expires_at).toEqual(refreshed[1]!.expiresAt > refresh.expiresAt ? refreshed[1]!.expiresAt : refresh.expiresAt);
  });

  it('a call that fails on its own (a token hash saved twice) fails alone: its batch is judged again call by call', async () => {
    const { store, schema } = await openCounted();
    const first = buildToken();
    expect(await store.tokens.saveTokens(first, null, { authorizedAt: new Date() })).toBe(true);
    const twice = buildToken({ tokenHash: first.tokenHash });
    const fresh = buildToken();
    const primer = store.tokens.saveTokens(buildToken(), null, { authorizedAt: new Date() });
    const [repeated, saved] = await Promise.allSettled([
      store.tokens.saveTokens(twice, null, { authorizedAt: new Date() }),
      store.tokens.saveTokens(fresh, null, { authorizedAt: new Date() }),
    ]);
    expect(await primer).toBe(true);
    expect(repeated.status).toBe('rejected');
    expect(saved).toEqual({ status: 'fulfilled', value: true });
    expect(await store.tokens.findAccessToken(fresh.tokenHash)).toEqual(fresh);
    expect(await store.tokens.findAccessToken(first.tokenHash)).toEqual(first);
    // All or nothing for the failed call: not even its grant row was written.
    const { rows } = await admin!.query(`SELECT 1 FROM "${schema}".grants WHERE grant_id = $1`, [twice.grantId]);
    expect(rows).toHaveLength(0);
  });

  it('an instance of the previous version, saving through save_tokens, still shares the locks and tombstones', async () => {
    const { store, schema } = await openCounted();
    const keys = createRevocationLockKeys(createPostgresTables(schema, '').tokens);
    const token = buildToken({ userId: null });
    await store.tokens.revokeClientTokens(token.clientId);
    const call = (t: typeof token, authorizedAt: Date) =>
      admin!.query(
        `SELECT "${schema}".save_tokens($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, NULL, NULL, NULL, NULL) AS saved`,
        [t.grantId, t.expiresAt, t.clientId, t.userId, authorizedAt, new Date(), String(keys.client(t.clientId)), null,
          t.tokenHash, [...t.scope], t.issuer, t.expiresAt],
      );
    // Authorized before the revocation this version recorded: refused. After it: saved, and readable here.
    expect((await call(token, new Date(Date.now() - 60_000))).rows[0].saved).toBe(false);
    const later = buildToken({ clientId: token.clientId, userId: null });
    expect((await call(later, secondsFromNow(1))).rows[0].saved).toBe(true);
    expect(await store.tokens.findAccessToken(later.tokenHash)).toEqual(later);
  });
});
