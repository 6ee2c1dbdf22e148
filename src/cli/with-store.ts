// Opens the store named by OAUTH_STORE for one command and always closes it afterwards.
import type { Store } from '../stores/contract.js';
import { createStoreFromUrl, DEFAULT_STORE_URL } from '../stores/from-url.js';

/**
 * The store URL the admin command uses: `OAUTH_STORE` (e.g. `sqlite:./data/oauth.sqlite`, `memory:`),
 * or the embedded default. The example app reads the same variable, so both see the same integrations.
 */
export function storeUrlFromEnv(env: NodeJS.ProcessEnv = process.env): string {
  const url = env['OAUTH_STORE']?.trim();
  return url ? url : DEFAULT_STORE_URL;
}

/**
 * Runs `work` against the configured store and closes it whatever happens: an open SQLite handle or
 * database connection would otherwise keep the process alive or leave the WAL unmerged.
 * @throws whatever opening the store or `work` throws.
 */
export async function withStore<T>(work: (store: Store) => Promise<T>): Promise<T> {
  const store = await createStoreFromUrl(storeUrlFromEnv());
  try {
    return await work(store);
  } finally {
    await store.close?.();
  }
}
