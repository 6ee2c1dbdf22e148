// An example custom Store on MariaDB (mysql2), written against the package's public API: a model for adapter authors.
import type { Store } from 'express-oauth-router';
import { createMariaDbClientStore } from './clients.js';
import { createMariaDbCodeStore } from './codes.js';
import { createMariaDbConsentStore } from './consents.js';
import { openMariaDb } from './db.js';
import { createMariaDbKeyStore } from './keys.js';
import { resolveMariaDbOptions, type MariaDbStoreOptions } from './options.js';
import { DEFAULT_COLLATION, EXACT_COLLATION, mariaDbTables, withSchema } from './schema.js';
import { startMariaDbSweeper } from './sweeper.js';
import { createMariaDbTokenStore } from './tokens.js';

export type { MariaDbStoreFaults, MariaDbStoreOptions } from './options.js';

/**
 * Creates a Store on MariaDB (tested on 10.11; MySQL 8 needs small changes, see the README) with the tiers
 * required, `administration`, `consents` and `signingKeys`, plus `close()` (not `rateLimits` nor `revocationFeed`). Its tables are created on first
 * use. Ids are compared exactly (`utf8mb4_nopad_bin`); codes are consumed under a row lock; `saveTokens`
 * checks the revocation tombstones and inserts in one transaction, under the tombstones' row locks; a
 * database that is unreachable, too slow or locked rejects with StoreUnavailableError.
 *
 * @example
 * ```ts
 * import { createOAuthRouter } from 'express-oauth-router';
 * const store = createMariaDbStore({ url: 'mysql://oauth:secret@127.0.0.1:3306/oauth' });
 * const oauth = createOAuthRouter(store, userAuth, { issuer: 'https://auth.example.com' });
 * app.use(oauth.router);
 * ```
 * @throws TypeError for invalid options (at once); every method rejects with StoreUnavailableError while
 *   the database cannot answer.
 * @see RFC 6749 §4.1.2 (single-use codes), §10.3–10.5, RFC 7009 §2.1 (revocation), RFC 9068 §4 (signing keys).
 */
export function createMariaDbStore(options: MariaDbStoreOptions): Store {
  const resolved = resolveMariaDbOptions(options);
  const { faults } = resolved;
  const tables = mariaDbTables(resolved.tablePrefix);
  const pool = openMariaDb(resolved);
  const db = withSchema(pool, tables, faults.caseInsensitiveIds === true ? DEFAULT_COLLATION : EXACT_COLLATION);
  const sweeper =
    resolved.sweepIntervalSeconds > 0
      ? startMariaDbSweeper(db, tables, resolved.sweepIntervalSeconds, (err) =>
          console.warn('mariadb-store: sweep of expired rows failed', err),
        )
      : null;
  let closed = false;
  return {
    clients: createMariaDbClientStore(db, tables),
    codes: createMariaDbCodeStore(db, tables),
    tokens: createMariaDbTokenStore(db, tables, faults),
    consents: createMariaDbConsentStore(db, tables),
    keys: createMariaDbKeyStore(db, tables, faults),
    async close() {
      if (closed) return;
      closed = true;
      await sweeper?.stop();
      await db.end();
    },
  };
}
