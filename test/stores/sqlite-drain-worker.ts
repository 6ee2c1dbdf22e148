// Child process for sqlite-revocation-drain.test.ts: revokes an integration's tokens, to be killed halfway through the drain.
import { createSqliteStore } from '../../src/stores/sqlite/index.js';

const [filename, clientId] = process.argv.slice(2);
if (!filename || !clientId || !process.send) throw new Error('usage: fork(sqlite-drain-worker.ts, [filename, clientId])');
const store = createSqliteStore({ filename, sweepIntervalSeconds: 0 });
process.send({ ready: true });
process.once('message', () => {
  void store.tokens.revokeClientTokens(clientId).then(() => process.send?.({ done: true }));
});
