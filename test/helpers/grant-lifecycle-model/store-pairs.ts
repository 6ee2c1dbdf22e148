// The stores a variant runs on: one store, or two instances' stores on the same data.
import type { Store } from '../../../src/stores/contract.js';
import { builtInStores, sharedBackends, type OpenedStore, type StoreCase } from '../built-in-stores.js';

// The engines, gated as every PostgreSQL and Redis suite is; `OAUTH_TEST_MODEL_REDIS_PREFIX` keeps this file's Redis keys under a prefix of the caller's.
const REDIS_PREFIX = process.env.OAUTH_TEST_MODEL_REDIS_PREFIX ?? '';

/** The built-in stores; with `OAUTH_TEST_MODEL_REDIS_PREFIX` the Redis one's keys go under the caller's prefix. */
export const STORES: readonly StoreCase[] = builtInStores('model_lifecycle', {}, { redisPrefix: REDIS_PREFIX });
/** The stores' labels, in order (their index places the variants' ports). */
export const STORE_LABELS = STORES.map(([label]) => label);

/** The SQLite, PostgreSQL and Redis stores as data two instances share (the memory store has no second instance). */
const BACKENDS = sharedBackends('model_lifecycle', { redisPrefix: REDIS_PREFIX });

/** Two instances' stores on the same data (the same store twice for one instance), and how to throw them away. */
export interface StorePair {
  readonly served: Store;
  readonly administered: Store;
  dispose(): Promise<void>;
}

/** One fresh store of `open`, or with `instances` 2 a fresh store of `label` opened twice (two connections, as two instances would). */
export async function openStores(label: string, open: () => Promise<OpenedStore>, instances: 1 | 2): Promise<StorePair> {
  if (instances === 1) {
    const opened = await open();
    return { served: opened.store, administered: opened.store, dispose: () => opened.dispose() };
  }
  const backend = await BACKENDS.find(([backendLabel]) => backendLabel === label)![2]();
  const served = await backend.instance();
  const administered = await backend.instance();
  return {
    served, administered,
    async dispose() {
      await served.close?.();
      await administered.close?.();
      await backend.dispose();
    },
  };
}
