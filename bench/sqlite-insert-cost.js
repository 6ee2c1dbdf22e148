// CPU and wall time per token saved in the SQLite store's own schema and statements, outside HTTP: the write's floor.
// node bench/sqlite-insert-cost.js [--tokens 60000] [--batch 8] [--synchronous full|normal] [--grant-ids random|ordered] [--keys random|ordered]
//
// Opens a fresh file with the store (so the schema, pragmas and prepared statements are the store's), then
// saves --tokens client_credentials access tokens as the group commit does: --batch saves per BEGIN IMMEDIATE …
// COMMIT, each save a savepoint with the tombstone check and the insert. Grant ids are the package's
// time-ordered ones, or random 43-character values as before 2026-11-26; token keys are the package's
// (`hashToken` of a token led by its millisecond), or the plain SHA-256 of a random token as before 2026-11-26.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import Database from 'better-sqlite3';
import { createSqliteStore } from '../dist/stores/sqlite/index.js';
import { prepareSqliteStatements } from '../dist/stores/sqlite/statements.js';
import { tokenValues } from '../dist/stores/sqlite/rows.js';
import { createRandomToken } from '../dist/crypto/random-token.js';
import { createGrantId } from '../dist/crypto/random-grant-id.js';
import { hashSecret } from '../dist/crypto/hash-secret.js';
import { hashToken } from '../dist/crypto/hash-token.js';
import { createOrderedToken } from '../dist/crypto/ordered-token.js';

const { values: cli } = parseArgs({
  options: {
    tokens: { type: 'string', default: '60000' },
    batch: { type: 'string', default: '8' },
    synchronous: { type: 'string', default: 'full' },
    'grant-ids': { type: 'string', default: 'ordered' },
    keys: { type: 'string', default: 'ordered' },
  },
});
const count = Number(cli.tokens);
const batchSize = Number(cli.batch);
const dir = mkdtempSync(join(tmpdir(), 'oauth-sqlite-insert-'));
const file = join(dir, 'oauth.sqlite');
try {
  // The store creates and migrates the file; this connection then writes as its group commit does.
  await createSqliteStore({ filename: file, sweepIntervalSeconds: 0 }).close();
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma(`synchronous = ${cli.synchronous === 'normal' ? 'NORMAL' : 'FULL'}`);
  const s = prepareSqliteStatements(db);
  const save = db.transaction((token) => {
    const now = Date.now();
    const refused = s.isRefused.get(token.grantId, now, token.clientId, now, now, token.grantId, token.clientId, null, now, now, token.grantId);
    if (refused !== 1) s.insertToken.run(...tokenValues('access', token, now));
  });
  const batch = db.transaction((tokens) => {
    for (const token of tokens) save(token);
  });
  const now = Date.now();
  const tokens = Array.from({ length: count }, () => ({
    tokenHash: cli.keys === 'random' ? hashSecret(createRandomToken()) : hashToken(createOrderedToken()),
    grantId: cli['grant-ids'] === 'random' ? createRandomToken() : createGrantId(),
    clientId: 'bench-client-0000000000',
    userId: null,
    scope: [],
    issuer: 'https://api.example.com',
    issuedAt: new Date(now),
    expiresAt: new Date(now + 3_600_000),
  }));
  const cpuFrom = process.cpuUsage();
  const wallFrom = performance.now();
  for (let i = 0; i < count; i += batchSize) batch.immediate(tokens.slice(i, i + batchSize));
  const cpu = process.cpuUsage(cpuFrom);
  const wall = performance.now() - wallFrom;
  db.close();
  console.log(JSON.stringify({
    tokens: count, batch: batchSize, synchronous: cli.synchronous, grantIds: cli['grant-ids'], keys: cli.keys,
    wallUsPerToken: +(wall * 1000 / count).toFixed(1),
    cpuUsPerToken: +((cpu.user + cpu.system) / count).toFixed(1),
    systemUsPerToken: +(cpu.system / count).toFixed(1),
  }));
} finally {
  rmSync(dir, { recursive: true, force: true });
}
