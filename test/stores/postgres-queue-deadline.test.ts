// PostgreSQL store: a call queued behind a stalled statement settles within 2 × queryTimeoutMs, and a save it fails is never written.
import pg from 'pg';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createPostgresStore } from '../../src/stores/postgres/index.js';
import { disposeOpened, type OpenedPostgresStore } from '../helpers/postgres-opened.js';
import { buildClient, buildCode, buildToken } from '../../src/testing/conformance-fixtures.js';
import { hashToken } from '../../src/crypto/hash-token.js';

const url = process.env.OAUTH_TEST_POSTGRES_URL ?? '';
if (!url) console.info('PostgreSQL queue deadline tests skipped: set OAUTH_TEST_POSTGRES_URL to run them');

const admin = url ? new pg.Pool({ connectionString: url, max: 4 }) : null;
const opened: OpenedPostgresStore[] = [];

/** Small, so that a stall costs the test little; every bound below is a multiple of it. */
const QUERY_TIMEOUT_MS = 300;
/** What a call may take past 2 × queryTimeoutMs: the timers' and the database's lateness on a busy 2-core machine. */
const SLACK_MS = 150;

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * A store on a host pool set up as the store sets up its own (statement_timeout, query_timeout and
 * connectionTimeoutMillis all queryTimeoutMs) but with one connection, so that a statement stalled on a lock holds
 * the whole pool, as a lossy link holding every pooled connection does.
 */
async function openOnOneConnection() {
  const schema = `oauth_qd${process.pid}_${Math.random().toString(36).slice(2, 10)}`;
  const pool = new pg.Pool({
    connectionString: url, max: 1, application_name: schema,
    connectionTimeoutMillis: QUERY_TIMEOUT_MS, query_timeout: QUERY_TIMEOUT_MS, statement_timeout: QUERY_TIMEOUT_MS,
  });
  const store = await createPostgresStore({ pool, schema, sweepIntervalSeconds: 0, queryTimeoutMs: QUERY_TIMEOUT_MS });
  opened.push({ store, pool, schema });
  return { store, schema };
}

/** A connection of the test's own holding ACCESS EXCLUSIVE on `tables` until `release()`. */
async function holdTable(...tables: string[]): Promise<{ release: () => Promise<void> }> {
  const holder = await admin!.connect();
  await holder.query('BEGIN');
  await holder.query(`LOCK TABLE ${tables.join(', ')} IN ACCESS EXCLUSIVE MODE`);
  return {
    async release() {
      await holder.query('COMMIT');
      holder.release();
    },
  };
}

/** How long `promise` took to settle from now, and whether it resolved. */
async function timed<T>(promise: Promise<T>): Promise<{ ms: number; ok: boolean; value?: T; error?: unknown }> {
  const start = performance.now();
  try {
    const value = await promise;
    return { ms: performance.now() - start, ok: true, value };
  } catch (error) {
    return { ms: performance.now() - start, ok: false, error };
  }
}

describe.skipIf(!url)('PostgreSQL store: calls queued behind a stalled statement (README, "Store options")', () => {
  afterEach(async () => {
    await disposeOpened(opened, admin!);
  });
  afterAll(async () => {
    await admin?.end();
  });

  it('saves queued behind a save that waits for the only connection settle within 2 × queryTimeoutMs, and one failed is never written', async () => {
    const { store, schema } = await openOnOneConnection();
    const { client } = buildClient();
    await store.clients.createClient(client);
    const lock = await holdTable(`"${schema}".tokens`);
    try {
      // A bearer check holds the only connection until its statement_timeout; a save then waits for it, and more
      // saves queue behind that one.
      const lookup = timed(store.tokens.findAccessToken(hashToken('stalled')));
      await sleep(50);
      const first = buildToken({ clientId: client.clientId });
      const saves = [timed(store.tokens.saveTokens(first, null, { authorizedAt: new Date() }))];
      const tokens = [first];
      for (let i = 0; i < 5; i += 1) {
        await sleep(10);
        const token = buildToken({ clientId: client.clientId });
        tokens.push(token);
        saves.push(timed(store.tokens.saveTokens(token, null, { authorizedAt: new Date() })));
      }
      const results = await Promise.all([lookup, ...saves]);
      const slowest = Math.max(...results.map((r) => r.ms));
      console.info(`queued behind a stalled statement, queryTimeoutMs ${QUERY_TIMEOUT_MS}: settled in ${results.map((r) => Math.round(r.ms)).join(', ')} ms`);
      for (const result of results) expect(result.ok, 'the table is locked throughout: no call can succeed').toBe(false);
      for (const result of results) expect(result.error).toMatchObject({ name: 'StoreUnavailableError' });
      expect(slowest, 'the slowest call, in ms').toBeLessThanOrEqual(2 * QUERY_TIMEOUT_MS + SLACK_MS);
      await lock.release();
      // Long enough for any statement still at the server to have run once the lock went.
      await sleep(2 * QUERY_TIMEOUT_MS);
      for (const token of tokens) expect(await store.tokens.findAccessToken(token.tokenHash), 'a save answered failed was written').toBeNull();
    } finally {
      await lock.release().catch(() => undefined);
    }
  });

  it('codes queued behind a consume that waits for the only connection settle within 2 × queryTimeoutMs, and one failed is not used up', async () => {
    const { store, schema } = await openOnOneConnection();
    const { client } = buildClient();
    await store.clients.createClient(client);
    const codes = Array.from({ length: 6 }, () => buildCode({ clientId: client.clientId }));
    for (const code of codes) await store.codes.saveCode(code);
    const lock = await holdTable(`"${schema}".codes`, `"${schema}".tokens`);
    try {
      const blocker = timed(store.tokens.findAccessToken(hashToken('stalled')));
      await sleep(50);
      const consumes = [];
      for (const code of codes) {
        consumes.push(timed(store.codes.consumeCode(code.codeHash)));
        await sleep(10);
      }
      const results = await Promise.all([blocker, ...consumes]);
      console.info(`codes queued behind a stalled statement, queryTimeoutMs ${QUERY_TIMEOUT_MS}: settled in ${results.map((r) => Math.round(r.ms)).join(', ')} ms`);
      for (const result of results) expect(result.ok).toBe(false);
      expect(Math.max(...results.map((r) => r.ms)), 'the slowest call, in ms').toBeLessThanOrEqual(2 * QUERY_TIMEOUT_MS + SLACK_MS);
      await lock.release();
      await sleep(2 * QUERY_TIMEOUT_MS);
      // Every code answered 503 is still there to be redeemed: the client may send it again.
      for (const code of codes) expect((await store.codes.consumeCode(code.codeHash)).kind, 'a code answered 503 was used up').toBe('consumed');
    } finally {
      await lock.release().catch(() => undefined);
    }
  });
});
