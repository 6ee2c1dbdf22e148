// Child process for sqlite-sync-order.test.ts (run under strace): the test host on a SQLite file, with codes to redeem.
import { createServer } from 'node:http';
import { createSqliteStore } from '../../src/stores/sqlite/index.js';
import { createStoreFromUrl } from '../../src/stores/from-url.js';
import { createOrderedToken } from '../../src/crypto/ordered-token.js';
import { hashToken } from '../../src/crypto/hash-token.js';
import { buildCode } from '../../src/testing/conformance-fixtures.js';
import { createTestApp, ISSUER, REDIRECT_URI, USER } from '../helpers/app.js';

/** The ready line: where the host listens and what the test may redeem. */
export interface SyncOrderReady {
  /** The host's own pid: strace, its parent, is not the process to stop. */
  readonly pid: number;
  readonly port: number;
  readonly clientId: string;
  readonly clientSecret: string;
  readonly codes: readonly string[];
}

// With a query (`?synchronous=normal`), the store is opened from the OAUTH_STORE URL `sqlite:<file>?<query>`.
const [filename, query] = process.argv.slice(2);
if (!filename) throw new Error('usage: sqlite-sync-order-worker.ts <database file> [sqlite: URL query]');
const store = query === undefined
  ? createSqliteStore({ filename, sweepIntervalSeconds: 0 })
  : await createStoreFromUrl(`sqlite:${filename}?${query}`);
const { app, codeClient } = await createTestApp({}, store);
const codes = Array.from({ length: 3 }, () => createOrderedToken());
for (const code of codes) {
  await store.codes.saveCode(buildCode({
    codeHash: hashToken(code), clientId: codeClient.clientId, userId: USER.id, redirectUri: REDIRECT_URI, issuer: ISSUER, codeChallenge: null,
  }));
}
const server = createServer(app);
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const { port } = server.address() as { port: number };
const ready: SyncOrderReady = { pid: process.pid, port, ...codeClient, codes };
process.stdout.write(`${JSON.stringify(ready)}\n`);
process.on('SIGTERM', () => {
  server.close();
  void Promise.resolve(store.close?.()).then(() => process.exit(0));
});
