// What the SQLite token write costs under other layouts and settings, same run, interleaved: what was tried for issue 10.
// node bench/sqlite-write-variants.js [--tokens 60000] [--batch 10] [--rounds 3] [--only store,random-keys,…] [--seed 1000000]
//
// Each variant is a fresh file made by the store (its schema and pragmas), then changed as the variant says,
// then written as the group commit writes: --batch saves per BEGIN IMMEDIATE … COMMIT, each save a savepoint
// with the store's tombstone check and its token insert (synchronous = FULL). Keys are the package's
// (`hashToken(createOrderedToken())`) unless the variant says otherwise. --seed first fills the file with that many
// live tokens of random keys (as bench/scale-seed.js does: what a file holds after an upgrade), then reopens it
// with a cold cache. Reports median CPU and wall µs per token.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import Database from 'better-sqlite3';
import { createSqliteStore } from '../dist/stores/sqlite/index.js';
import { prepareSqliteStatements } from '../dist/stores/sqlite/statements.js';
import { createRandomToken } from '../dist/crypto/random-token.js';
import { createOrderedToken } from '../dist/crypto/ordered-token.js';
import { createGrantId } from '../dist/crypto/random-grant-id.js';
import { hashSecret } from '../dist/crypto/hash-secret.js';
import { hashToken } from '../dist/crypto/hash-token.js';

const TOKENS_COLUMNS = `token_hash TEXT PRIMARY KEY, kind TEXT NOT NULL CHECK (kind IN ('access', 'refresh')),
  grant_id TEXT NOT NULL, client_id TEXT NOT NULL, user_id TEXT, scope TEXT NOT NULL, issuer TEXT NOT NULL,
  expires_at INTEGER NOT NULL`;
const rebuildTokens = (suffix, indexes) => `DROP TABLE tokens; CREATE TABLE tokens (${TOKENS_COLUMNS}) ${suffix}; ${indexes}`;
const ALL_INDEXES = `CREATE INDEX tokens_grant_id ON tokens (grant_id);
  CREATE INDEX tokens_client_user ON tokens (client_id, user_id); CREATE INDEX tokens_expires_at ON tokens (expires_at);`;

/** name → { sql run on the store's file before writing, pragmas before the store creates it, random keys } */
const VARIANTS = {
  store: {},
  'random-keys': { randomKeys: true },
  'without-rowid': { sql: rebuildTokens('STRICT, WITHOUT ROWID', ALL_INDEXES) },
  'no-expiry-index': { sql: 'DROP INDEX tokens_expires_at' },
  'hash-index-only': { sql: 'DROP INDEX tokens_expires_at; DROP INDEX tokens_client_user; DROP INDEX tokens_grant_id' },
  'page-size-2048': { before: ['page_size = 2048'] },
  'page-size-8192': { before: ['page_size = 8192'] },
  'checkpoint-4000': { pragmas: ['wal_autocheckpoint = 4000'] },
  'checkpoint-16000': { pragmas: ['wal_autocheckpoint = 16000'] },
  // The save without its savepoint: the tombstone check, then the insert, in the batch's transaction.
  'no-savepoint': { savepoint: false },
  // The check and the insert as one INSERT … SELECT … WHERE NOT EXISTS, no savepoint (one statement is atomic).
  'one-statement': { savepoint: false, oneStatement: true },
  // The store's check and insert as they were until 2026-11-27: parameters bound by name from an object.
  'named-binding': { namedBinding: true },
};

const NAMED_INSERT = `
  INSERT INTO tokens (token_hash, kind, grant_id, client_id, user_id, scope, issuer, expires_at)
  VALUES (@token_hash, @kind, @grant_id, @client_id, @user_id, @scope, @issuer, @expires_at)`;
const NAMED_IS_REFUSED = `
  SELECT EXISTS (SELECT 1 FROM revoked_grants WHERE grant_id = @grant_id AND expires_at > @now)
      OR EXISTS (SELECT 1 FROM revoked_clients WHERE client_id = @client_id AND revoked_at >= @authorized_at AND expires_at > @now)
      OR EXISTS (SELECT 1 FROM revoked_client_users WHERE client_id = @client_id AND user_id = @user_id
                   AND revoked_at >= @authorized_at AND expires_at > @now)`;

const INSERT_UNLESS_REFUSED = `
  INSERT INTO tokens (token_hash, kind, grant_id, client_id, user_id, scope, issuer, expires_at)
  SELECT @token_hash, @kind, @grant_id, @client_id, @user_id, @scope, @issuer, @expires_at
  WHERE NOT EXISTS (SELECT 1 FROM revoked_grants WHERE grant_id = @grant_id AND expires_at > @now)
    AND NOT EXISTS (SELECT 1 FROM revoked_clients WHERE client_id = @client_id AND revoked_at >= @authorized_at AND expires_at > @now)
    AND NOT EXISTS (SELECT 1 FROM revoked_client_users WHERE client_id = @client_id AND user_id = @user_id
                      AND revoked_at >= @authorized_at AND expires_at > @now)`;

const { values: cli } = parseArgs({
  options: {
    tokens: { type: 'string', default: '60000' },
    batch: { type: 'string', default: '10' },
    rounds: { type: 'string', default: '3' },
    only: { type: 'string' },
    seed: { type: 'string', default: '0' },
  },
});
const count = Number(cli.tokens);
const batchSize = Number(cli.batch);
const names = cli.only ? cli.only.split(',') : Object.keys(VARIANTS);
for (const name of names) if (!VARIANTS[name]) throw new Error(`unknown variant ${name}; known: ${Object.keys(VARIANTS).join(', ')}`);

function seed(file, count) {
  const db = new Database(file);
  try {
    db.pragma('cache_size = -262144');
    const { insertToken } = prepareSqliteStatements(db);
    const expiresAt = Date.now() + 7_200_000;
    db.transaction(() => {
      for (let i = 0; i < count; i += 1) {
        insertToken.run(hashSecret(`seed-${i}`), 'access', `seed-grant-${i}`, `seed-client-${i % 100}`, null, '[]', 'https://api.example.com', expiresAt);
      }
    }).immediate();
    db.pragma('wal_checkpoint(TRUNCATE)');
  } finally {
    db.close();
  }
}

async function measure(variant) {
  const dir = mkdtempSync(join(tmpdir(), 'oauth-sqlite-variant-'));
  const file = join(dir, 'oauth.sqlite');
  try {
    if (variant.before) {
      const fresh = new Database(file);
      for (const pragma of variant.before) fresh.pragma(pragma);
      fresh.close();
    }
    await createSqliteStore({ filename: file, sweepIntervalSeconds: 0 }).close();
    if (Number(cli.seed) > 0) seed(file, Number(cli.seed));
    const db = new Database(file);
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = FULL');
    db.pragma('cache_size = -32768');
    for (const pragma of variant.pragmas ?? []) db.pragma(pragma);
    if (variant.sql) db.exec(variant.sql);
    const s = prepareSqliteStatements(db);
    const now = Date.now();
    const insertUnlessRefused = db.prepare(INSERT_UNLESS_REFUSED);
    const named = variant.namedBinding ? { isRefused: db.prepare(NAMED_IS_REFUSED).pluck(), insertToken: db.prepare(NAMED_INSERT) } : null;
    const checkAndInsert = variant.oneStatement
      ? (row) => insertUnlessRefused.run({ ...row, authorized_at: now, now })
      : named
        ? (row) => {
          const refused = named.isRefused.get({ grant_id: row.grant_id, client_id: row.client_id, user_id: null, authorized_at: now, now });
          if (refused !== 1) named.insertToken.run(row);
        }
        // As the store binds them (src/stores/sqlite/tokens.ts): positional values.
        : (row) => {
          const refused = s.isRefused.get(row.grant_id, now, row.client_id, now, now, row.grant_id, row.client_id, row.user_id, now, now, row.grant_id);
          if (refused !== 1) s.insertToken.run(row.token_hash, row.kind, row.grant_id, row.client_id, row.user_id, row.scope, row.issuer, row.expires_at, now);
        };
    const save = variant.savepoint === false ? checkAndInsert : db.transaction(checkAndInsert);
    const batch = db.transaction((rows) => {
      for (const row of rows) save(row);
    });
    const rows = [];
    const cpuFrom = process.cpuUsage();
    const wallFrom = performance.now();
    for (let i = 0; i < count; i += batchSize) {
      // Made as the token endpoint makes them, just before the write: ordered keys carry this millisecond.
      rows.length = 0;
      for (let j = i; j < Math.min(count, i + batchSize); j += 1) {
        const key = variant.randomKeys ? hashSecret(createRandomToken()) : hashToken(createOrderedToken());
        rows.push({ token_hash: key, kind: 'access', grant_id: createGrantId(), client_id: 'bench-client-0000000000', user_id: null, scope: '[]', issuer: 'https://api.example.com', expires_at: now + 3_600_000 });
      }
      batch.immediate(rows);
    }
    const cpu = process.cpuUsage(cpuFrom);
    const wall = performance.now() - wallFrom;
    db.close();
    return { cpu: (cpu.user + cpu.system) / count, wall: wall * 1000 / count };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const results = Object.fromEntries(names.map((name) => [name, []]));
for (let round = 0; round < Number(cli.rounds); round += 1) {
  for (const name of names) results[name].push(await measure(VARIANTS[name]));
}
const median = (values) => values.sort((a, b) => a - b)[Math.floor(values.length / 2)];
console.log(`${count} tokens${Number(cli.seed) > 0 ? ` into a file of ${cli.seed} seeded ones` : ''}, batches of ${batchSize}, synchronous = FULL, ${cli.rounds} rounds interleaved (median; key and row making included)`);
console.log('| variant | CPU µs per token | wall µs per token | CPU per round |');
console.log('|---|---:|---:|---|');
for (const name of names) {
  const cpu = results[name].map((r) => r.cpu);
  console.log(`| ${name} | ${median([...cpu]).toFixed(1)} | ${median(results[name].map((r) => r.wall)).toFixed(1)} | ${cpu.map((v) => v.toFixed(1)).join(' / ')} |`);
}
