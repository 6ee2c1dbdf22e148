// Child process of store-warnings.test.ts: opens the store OAUTH_STORE names with no logger, as the CLI and a host do
// (or, with OAUTH_TEST_THROWING_LOGGER=1, with a logger that throws after saying it was called).
import { createStoreFromUrl } from '../../src/stores/from-url.js';

const throwing = {
  warn(message: string): void {
    process.stderr.write(`logger called: ${message}\n`);
    throw new Error('the host logger failed');
  },
};
const store = await createStoreFromUrl(process.env.OAUTH_STORE ?? '', process.env.OAUTH_TEST_THROWING_LOGGER === '1' ? { logger: throwing } : {});
// An integration lookup leaves a connection idle in the pool: the one the test then has the server drop.
await store.clients.findClient('nobody');
process.stdout.write('ready\n');
process.once('SIGTERM', () => {
  void store.close?.().finally(() => process.exit(0));
});
