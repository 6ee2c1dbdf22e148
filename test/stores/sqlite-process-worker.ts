// Child process for sqlite.test.ts: opens the store file at once with its siblings, then races to consume a code.
import { createSqliteStore } from '../../src/stores/sqlite/index.js';

const filename = process.argv[2];
if (!filename || !process.send) throw new Error('usage: fork(sqlite-process-worker.ts, [filename])');

// Opening migrates the schema: siblings do the same at the same moment, which is part of what is tested.
const store = createSqliteStore({ filename, sweepIntervalSeconds: 0 });
process.send({ ready: true });

process.on('message', (message: { codeHash: string }) => {
  void store.codes
    .consumeCode(message.codeHash)
    .then((result) => process.send?.({ result }))
    .catch((err: unknown) => process.send?.({ error: String(err) }))
    .finally(() => {
      void store.close?.().then(() => process.disconnect());
    });
});
