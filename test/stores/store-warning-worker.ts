// Child process of store-warnings.test.ts: opens the store OAUTH_STORE names with no logger, as the CLI and a host do.
import { createStoreFromUrl } from '../../src/stores/from-url.js';

const store = await createStoreFromUrl(process.env.OAUTH_STORE ?? '');
// An integration lookup leaves a connection idle in the pool: the one the test then has the server drop.
await store.clients.findClient('nobody');
process.stdout.write('ready\n');
process.once('SIGTERM', () => {
  void store.close?.().finally(() => process.exit(0));
});
