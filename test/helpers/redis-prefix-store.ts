// A Redis store on a key prefix of one test file's own, an admin client beside it, and every key of the prefix deleted after.
import { createClient } from 'redis';
import { afterAll, beforeAll } from 'vitest';
import type { AdministrationStore } from '../../src/stores/contract.js';
import { createRedisStore } from '../../src/stores/redis/index.js';

/** The prefix, the admin client (connected by `openAround`), and the hooks that open and clear the store. */
export interface RedisPrefixStore {
  readonly prefix: string;
  readonly admin: ReturnType<typeof createClient>;
  /** Registers, in the calling `describe`, the store's opening (then `onOpen`) before its tests and the cleanup after. */
  openAround(onOpen: (store: AdministrationStore) => void): void;
}

/** `name` goes in the prefix with the process id and a random part, so parallel files never share keys. */
export function redisPrefixStore(url: string, name: string): RedisPrefixStore {
  const prefix = `oauth-test:${process.pid}:${name}:${Math.random().toString(36).slice(2, 8)}:`;
  const admin = createClient({ url });
  let store: AdministrationStore | undefined;
  return {
    prefix,
    admin,
    openAround(onOpen) {
      beforeAll(async () => {
        await admin.connect();
        store = (await createRedisStore({ url, prefix, sweepIntervalSeconds: 0, logger: { warn: () => undefined } })) as AdministrationStore;
        onOpen(store);
      });
      afterAll(async () => {
        await store?.close?.();
        // SCAN, never KEYS, as an operator would.
        const all: string[] = [];
        for await (const batch of admin.scanIterator({ MATCH: `${prefix}*`, COUNT: 500 })) all.push(...batch);
        if (all.length) await admin.del(all);
        await admin.quit();
      });
    },
  };
}
