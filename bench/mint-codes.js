// Registers an authorization_code integration and mints authorization codes for it in bulk, before a timed run.
import { randomBytes } from 'node:crypto';

export const REDIRECT_URI = 'https://client.example/callback';

/**
 * Code number `i` as the package issues codes (`createOrderedToken`: issuing millisecond, a dot, random part):
 * code i is dated `baseMs + i`, as if the codes had been issued one a millisecond in the order they are
 * redeemed, which is how a real server sees them (redeemed seconds after they were issued).
 */
export function benchCode(prefix, baseMs, i) {
  return `${(baseMs + i).toString(32).padStart(11, '0')}.${prefix}${i}`;
}

/**
 * Mints `count` codes, `benchCode(codePrefix, codeBaseMs, i)` (i = 0 … count − 1), each a record as issue-code.ts builds it
 * (own grant `${codePrefix}-grant-${i}`, no PKCE challenge, living an hour), and each user's consent. With one user
 * (the default) every code is `bench-user`'s; with `users` > 1 code i is `bench-user-${i % users}`'s. On SQLite the codes
 * go in through a second connection in one transaction of the store's own prepared insert (one sync instead
 * of one per code); elsewhere through `store.codes.saveCode`, 500 at a time.
 * @returns what the load generator needs to redeem them (the ready line of bench/server.js carries it)
 */
export async function mintCodes({ store, sqliteFile, issuer, count, users = 1 }) {
  const { registerClient, hashToken } = await import('express-oauth-router');
  const { client, clientSecret } = await registerClient(store, {
    name: 'bench code', flow: 'authorization_code', redirectUris: [REDIRECT_URI], allowedScopes: ['bench:read'],
  });
  const userOf = (i) => (users > 1 ? `bench-user-${i % users}` : 'bench-user');
  const codePrefix = randomBytes(12).toString('base64url');
  const codeBaseMs = Date.now() - count;
  const issuedAt = new Date();
  const expiresAt = new Date(Date.now() + 3_600_000);
  const record = (i) => ({
    codeHash: hashToken(benchCode(codePrefix, codeBaseMs, i)),
    grantId: `${codePrefix}-grant-${i}`,
    clientId: client.clientId,
    userId: userOf(i),
    redirectUri: REDIRECT_URI,
    scope: ['bench:read'],
    codeChallenge: null,
    issuer,
    issuedAt,
    expiresAt,
  });
  const started = performance.now();
  if (sqliteFile) {
    const { default: Database } = await import('better-sqlite3');
    const { prepareSqliteStatements } = await import('../dist/stores/sqlite/statements.js');
    const { codeToRow } = await import('../dist/stores/sqlite/rows.js');
    const db = new Database(sqliteFile);
    try {
      db.pragma('busy_timeout = 5000');
      const { insertCode } = prepareSqliteStatements(db);
      db.transaction(() => {
        for (let i = 0; i < count; i += 1) insertCode.run(codeToRow(record(i)));
      }).immediate();
      // Not left for the server's first commits to checkpoint inside the warm-up or the measured window.
      db.pragma('wal_checkpoint(TRUNCATE)');
    } finally {
      db.close();
    }
  } else {
    for (let i = 0; i < count; i += 500) {
      await Promise.all(Array.from({ length: Math.min(500, count - i) }, (_, j) => store.codes.saveCode(record(i + j))));
    }
  }
  for (let u = 0; u < Math.min(users, count); u += 1) {
    await store.consents?.saveConsent({ userId: userOf(u), clientId: client.clientId, scope: ['bench:read'], grantedAt: new Date() });
  }
  return {
    codeClientId: client.clientId, codeClientSecret: clientSecret, codePrefix, codeBaseMs, codeCount: count, codeUsers: users,
    redirectUri: REDIRECT_URI, mintMs: Math.round(performance.now() - started),
  };
}
