// SQLite schema 9: another connection's commits move a process's caches only when they revoke or write an integration.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import type { TokenRecord } from '../../src/stores/contract.js';
import { createSqliteStore, type SqliteStore } from '../../src/stores/sqlite/index.js';
import { createSqliteChangeWatch } from '../../src/stores/sqlite/change-watch.js';
import type { SqliteConnection } from '../../src/stores/sqlite/driver.js';
import { buildClient, buildCode, buildConsent } from '../../src/testing/conformance-fixtures.js';
import { migrateSqliteSchema, SQLITE_SCHEMA_VERSION } from '../../src/stores/sqlite/schema.js';
import { tokenValues } from '../../src/stores/sqlite/rows.js';

const dirs: string[] = [];
const closers: (() => unknown)[] = [];

afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** Two stores on one file: two connections, as two processes (or the app and the CLI) have. */
function twoStores(): { file: string; here: SqliteStore; there: SqliteStore } {
  const dir = mkdtempSync(join(tmpdir(), 'oauth-sqlite-counters-'));
  dirs.push(dir);
  const file = join(dir, 'oauth.sqlite');
  const here = createSqliteStore({ filename: file, sweepIntervalSeconds: 0 });
  const there = createSqliteStore({ filename: file, sweepIntervalSeconds: 0 });
  closers.push(() => here.close(), () => there.close());
  return { file, here, there };
}

/** A third connection of the host's own, for SQL written behind the stores' backs (a DBA, a script). */
function rawConnection(file: string): Database.Database {
  const db = new Database(file);
  db.pragma('busy_timeout = 2000');
  closers.push(() => db.close());
  return db;
}

function token(clientId: string, userId: string | null, grantId = randomBytes(12).toString('hex')): TokenRecord {
  return {
    tokenHash: randomBytes(32).toString('base64url'), grantId, clientId, userId, scope: ['envelopes:read'],
    issuer: 'https://issuer.example', expiresAt: new Date(Date.now() + 3_600_000),
  };
}

async function savePair(store: SqliteStore, clientId: string, userId: string | null, authorizedAt = new Date()): Promise<{ access: TokenRecord; refresh: TokenRecord }> {
  const access = token(clientId, userId);
  const refresh = token(clientId, userId, access.grantId);
  expect(await store.tokens.saveTokens(access, refresh, { authorizedAt })).toBe(true);
  return { access, refresh };
}

/** The revocation feed's mark of `store` now; it must vouch (not null) for the comparisons to mean anything. */
function markOf(store: SqliteStore): number {
  const mark = store.revocations!.mark();
  expect(mark).not.toBeNull();
  return mark as number;
}

describe('SQLite revocation feed: what another connection commits (schema 9 change counters, RFC 7009 §2.1)', () => {
  it('a token saved through another connection leaves the mark where it was: cached tokens stay cached', async () => {
    const { here, there } = twoStores();
    const before = markOf(here);
    for (let i = 0; i < 5; i += 1) await savePair(there, 'client-a', `user-${i}`);
    expect(markOf(here)).toBe(before);
  });

  it('codes saved and redeemed, consents and failed-sign-in counts written elsewhere leave the mark where it was', async () => {
    const { here, there } = twoStores();
    const before = markOf(here);
    const code = buildCode({ clientId: 'client-a' });
    await there.codes.saveCode(code);
    expect((await there.codes.consumeCode(code.codeHash)).kind).toBe('consumed');
    await there.consents.saveConsent(buildConsent({ userId: 'alice', clientId: 'client-a' }));
    await there.rateLimits!.hit('sign-in:alice', 60_000, new Date());
    expect(markOf(here)).toBe(before);
  });

  const revocations: [string, (there: SqliteStore, pair: { access: TokenRecord }) => Promise<unknown>][] = [
    ['an access token revoked (RFC 7009)', (there, { access }) => there.tokens.revokeAccessToken(access.tokenHash)],
    ['a grant revoked (a replayed code, RFC 6749 §4.1.2)', (there, { access }) => there.tokens.revokeGrant(access.grantId)],
    ["an integration's tokens revoked", (there, { access }) => there.tokens.revokeClientTokens(access.clientId)],
    ["a user's tokens at an integration revoked", (there, { access }) => there.tokens.revokeClientTokens(access.clientId, access.userId!)],
  ];
  it.each(revocations)('%s through another connection moves the mark', async (_name, revoke) => {
    const { here, there } = twoStores();
    const pair = await savePair(there, 'client-a', 'alice');
    const before = markOf(here);
    await revoke(there, pair);
    expect(markOf(here)).not.toBe(before);
  });

  it('an integration deleted through another connection moves the mark (its tokens go with it)', async () => {
    const { here, there } = twoStores();
    const { client } = buildClient({ clientId: 'client-a' });
    await there.clients.createClient(client);
    await savePair(there, 'client-a', 'alice');
    const before = markOf(here);
    expect(await there.clients.deleteClient!('client-a')).toBe(true);
    expect(markOf(here)).not.toBe(before);
  });

  const rawWrites: [string, string][] = [
    ['an access token deleted', "DELETE FROM tokens WHERE kind = 'access'"],
    ['an access token shortened', "UPDATE tokens SET expires_at = expires_at - 1000 WHERE kind = 'access'"],
    ['an integration tombstone inserted', "INSERT INTO revoked_clients (client_id, revoked_at, expires_at) VALUES ('client-a', 9e15, 9e15)"],
    ['a user tombstone inserted', "INSERT INTO revoked_client_users (client_id, user_id, revoked_at, expires_at) VALUES ('client-a', 'alice', 9e15, 9e15)"],
  ];
  it.each(rawWrites)("%s by a host's own SQL on another connection moves the mark (triggers count every writer)", async (_name, sql) => {
    const { file, here, there } = twoStores();
    await savePair(there, 'client-a', 'alice');
    const before = markOf(here);
    rawConnection(file).exec(sql);
    expect(markOf(here)).not.toBe(before);
  });

  it('a refresh token deleted elsewhere (a rotation) leaves the mark: the bearer cache never holds one', async () => {
    const { file, here, there } = twoStores();
    await savePair(there, 'client-a', 'alice');
    const before = markOf(here);
    rawConnection(file).exec("DELETE FROM tokens WHERE kind = 'refresh'");
    expect(markOf(here)).toBe(before);
  });

  it("access tokens a tombstone already refuses, deleted elsewhere (a drain's chunks), leave the mark: the tombstone moved it", async () => {
    const { file, here, there } = twoStores();
    const revokedAt = Date.now();
    for (let i = 0; i < 5; i += 1) await savePair(there, 'client-a', `user-${i}`, new Date(revokedAt - 1000));
    await savePair(there, 'client-b', 'alice', new Date(revokedAt - 1000));
    const db = rawConnection(file);
    let before = markOf(here);
    db.prepare("INSERT INTO revoked_clients (client_id, revoked_at, expires_at, draining) VALUES ('client-a', ?, ?, 1)").run(revokedAt, revokedAt + 3_600_000);
    expect(markOf(here)).not.toBe(before);
    before = markOf(here);
    db.exec("DELETE FROM tokens WHERE client_id = 'client-a'");
    expect(markOf(here)).toBe(before);
    // Not under a tombstone: a token saved after the revocation, another integration's.
    await savePair(there, 'client-a', 'zed', new Date(revokedAt + 1000));
    db.exec("DELETE FROM tokens WHERE client_id = 'client-a' AND kind = 'access'");
    expect(markOf(here)).not.toBe(before);
    before = markOf(here);
    db.exec("DELETE FROM tokens WHERE client_id = 'client-b' AND kind = 'access'");
    expect(markOf(here)).not.toBe(before);
  });

  it("a user tombstone's tokens deleted elsewhere leave the mark; the same user's at another integration move it", async () => {
    const { file, here, there } = twoStores();
    const revokedAt = Date.now();
    await savePair(there, 'client-a', 'alice', new Date(revokedAt - 1000));
    await savePair(there, 'client-b', 'alice', new Date(revokedAt - 1000));
    const db = rawConnection(file);
    db.prepare("INSERT INTO revoked_client_users (client_id, user_id, revoked_at, expires_at, draining) VALUES ('client-a', 'alice', ?, ?, 1)")
      .run(revokedAt, revokedAt + 3_600_000);
    let before = markOf(here);
    db.exec("DELETE FROM tokens WHERE client_id = 'client-a' AND user_id = 'alice'");
    expect(markOf(here)).toBe(before);
    db.exec("DELETE FROM tokens WHERE client_id = 'client-b' AND user_id = 'alice'");
    expect(markOf(here)).not.toBe(before);
  });

  it("a grant tombstone written elsewhere alone leaves the mark: lookups do not read it, and a grant's revocation deletes its tokens", async () => {
    const { file, here, there } = twoStores();
    const { access } = await savePair(there, 'client-a', 'alice');
    const db = rawConnection(file);
    const before = markOf(here);
    // As a drain's chunk records the grants of the refresh tokens it deletes.
    db.prepare('INSERT INTO revoked_grants (grant_id, expires_at) VALUES (?, ?)').run('another-grant', Date.now() + 3_600_000);
    expect(markOf(here)).toBe(before);
    await there.tokens.revokeGrant(access.grantId);
    expect(markOf(here)).not.toBe(before);
  });

  it('a save and a revocation committed together elsewhere move the mark', async () => {
    const { file, here, there } = twoStores();
    const { access } = await savePair(there, 'client-a', 'alice');
    const before = markOf(here);
    const db = rawConnection(file);
    db.transaction(() => {
      db.prepare("UPDATE rate_limits SET count = count + 1").run();
      db.prepare('DELETE FROM tokens WHERE token_hash = ?').run(access.tokenHash);
    })();
    expect(markOf(here)).not.toBe(before);
  });
});

describe('SQLite integration copies: what another connection commits (schema 9 change counters, RFC 6749 §2)', () => {
  /** The integration copies' mark as a store's clients part takes it, on a connection of its own. */
  function clientsMark(file: string): () => number | null {
    const db = rawConnection(file);
    return createSqliteChangeWatch(db as unknown as SqliteConnection).markOf('clients', true);
  }

  it('tokens saved and revoked elsewhere leave the integration copies: only an integration write drops them', async () => {
    const { file, there } = twoStores();
    const mark = clientsMark(file);
    const before = mark();
    expect(before).not.toBeNull();
    const { access } = await savePair(there, 'client-a', 'alice');
    await there.tokens.revokeAccessToken(access.tokenHash);
    await there.tokens.revokeClientTokens('client-a');
    expect(mark()).toBe(before);
  });

  it('an integration created, updated or deleted elsewhere moves the integration copies', async () => {
    const { file, there } = twoStores();
    const mark = clientsMark(file);
    const { client } = buildClient({ clientId: 'client-a' });
    let last = mark();
    await there.clients.createClient(client);
    expect(mark()).not.toBe(last);
    last = mark();
    await there.clients.updateClient!('client-a', { disabled: true });
    expect(mark()).not.toBe(last);
    last = mark();
    await there.clients.deleteClient!('client-a');
    expect(mark()).not.toBe(last);
  });
});

describe('SQLite schema 9 on a file an earlier version wrote', () => {
  it('a schema 8 file migrates at open, and a deletion by a connection that knows nothing of the counters still moves the mark', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'oauth-sqlite-counters-'));
    dirs.push(dir);
    const file = join(dir, 'oauth.sqlite');
    const old = new Database(file);
    old.pragma('journal_mode = WAL');
    migrateSqliteSchema(old, 8);
    const access = token('client-a', 'alice');
    // As the previous version inserts: naming its columns, with the issued_at schema 8 added.
    old.prepare(`INSERT INTO tokens (token_hash, kind, grant_id, client_id, user_id, scope, issuer, expires_at, issued_at)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`).run(...tokenValues('access', access, Date.now() - 1000));
    const here = createSqliteStore({ filename: file, sweepIntervalSeconds: 0 });
    closers.push(() => here.close(), () => old.close());
    expect(old.pragma('user_version', { simple: true })).toBe(SQLITE_SCHEMA_VERSION);
    expect(await here.tokens.findAccessToken(access.tokenHash)).not.toBeNull();
    const before = markOf(here);
    // The previous version's revocation endpoint: one DELETE, no counter in its code.
    old.prepare("DELETE FROM tokens WHERE token_hash = ? AND kind = 'access'").run(access.tokenHash);
    expect(markOf(here)).not.toBe(before);
  });
});
