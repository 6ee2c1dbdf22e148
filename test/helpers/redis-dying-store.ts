// A Redis store of a process that dies (SIGKILL, a crash, a deploy) right after a given script has run.
import { createClient, createCluster } from 'redis';
import { createRedisStore, type RedisStore } from '../../src/stores/redis/index.js';
import type { RedisScript } from '../../src/stores/redis/scripts.js';

/** The store, and the close of it and of its connection. */
export interface DyingRedisStore {
  readonly store: RedisStore;
  close(): Promise<void>;
}

/** Where the store connects: a plain Redis's URL, or a cluster's root nodes. */
export type DyingRedisTarget = { readonly url: string } | { readonly rootNodes: readonly string[] };

/** Whether a command runs `script` (by SHA, or by source after a NOSCRIPT). */
export function runs(script: RedisScript): (args: readonly string[]) => boolean {
  return (args) => (args[0] === 'EVALSHA' && args[1] === script.sha) || (args[0] === 'EVAL' && args[1] === script.source);
}

/**
 * Opens a store on `prefix` whose process dies once a command `diesAfter` matches has run: that command runs and
 * answers, every command after it fails, as the store's own would once its process is gone. No sweep, no feed.
 */
export async function openDyingRedisStore(
  target: DyingRedisTarget, prefix: string, diesAfter: (args: readonly string[]) => boolean,
): Promise<DyingRedisStore> {
  let dead = false;
  const quiet = { warn: () => undefined };
  if ('url' in target) {
    const real = createClient({ url: target.url });
    await real.connect();
    const store = await createRedisStore({
      client: {
        get isOpen() {
          return real.isOpen;
        },
        async sendCommand(args) {
          if (dead) throw new Error('the process is gone');
          const reply = await real.sendCommand([...args]);
          if (diesAfter(args)) dead = true;
          return reply;
        },
      },
      prefix, sweepIntervalSeconds: 0, logger: quiet,
    });
    return { store, close: async () => { await store.close(); await real.close(); } };
  }
  const real = createCluster({ rootNodes: target.rootNodes.map((url) => ({ url })) });
  await real.connect();
  const store = await createRedisStore({
    clusterClient: {
      get isOpen() {
        return real.isOpen;
      },
      async sendCommand(firstKey, isReadonly, args) {
        if (dead) throw new Error('the process is gone');
        const reply = await real.sendCommand(firstKey, isReadonly, args);
        if (diesAfter(args)) dead = true;
        return reply;
      },
    },
    prefix, logger: quiet,
  });
  return { store, close: async () => { await store.close(); await real.close(); } };
}
