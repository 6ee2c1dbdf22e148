// Shared tools of the shared-backend store tests: two instances on one namespace, saves racing a revocation, outages.
import { expect } from 'vitest';
import type { Store, TokenRecord } from '../../src/stores/contract.js';

/** How a backend's test opens an instance on a namespace (schema, key prefix) and wipes that namespace. */
export interface InstancePair<S extends Store> {
  /** A namespace no other test (or parallel test file) uses, so the instances start empty. */
  readonly freshNamespace: () => string;
  readonly open: (namespace: string) => Promise<S>;
  readonly wipe: (namespace: string) => Promise<void>;
}

/**
 * Two instances (two connections) on one fresh namespace, closed and wiped after `body`: what two processes
 * behind a load balancer share, so the store contract's atomicity (RFC 6749 §4.1.2, §10.5) holds across them.
 */
export async function withTwoInstances<S extends Store>(
  pair: InstancePair<S>,
  body: (a: S, b: S, namespace: string) => Promise<void>,
): Promise<void> {
  const namespace = pair.freshNamespace();
  const [a, b] = [await pair.open(namespace), await pair.open(namespace)];
  try {
    await body(a, b, namespace);
  } finally {
    await Promise.all([a.close?.(), b.close?.()]);
    await pair.wipe(namespace);
  }
}

/** How `saveWhile` starts its saves around the revocation. */
export interface SaveWhileOptions {
  /** The authorization moment every save names (a revocation at or after it refuses the save). */
  readonly authorizedAt: Date;
  /** Concurrent workers, each saving one token set after another. */
  readonly workers: number;
  /** Whether each worker sends its first save before the revocation's first command rather than after it. */
  readonly saveFirst: boolean;
}

/** Every token `saveWhile` tried to save, and how many of its saves were accepted and refused. */
export interface SaveWhileOutcome {
  readonly tried: TokenRecord[];
  readonly accepted: number;
  readonly refused: number;
}

/**
 * Saves the token sets `make` builds on `store` from `workers` concurrent workers, one save after another, from
 * before `revoke` (run on another instance) settles until it has, so that saves land before, between and
 * after its steps: a revocation (RFC 7009 §2.1) must leave none of them findable.
 */
export async function saveWhile(
  store: Store,
  revoke: () => Promise<unknown>,
  make: () => { access: TokenRecord; refresh: TokenRecord | null },
  options: SaveWhileOptions,
): Promise<SaveWhileOutcome> {
  const tried: TokenRecord[] = [];
  let accepted = 0;
  let refused = 0;
  const save = async (): Promise<void> => {
    const { access, refresh } = make();
    tried.push(access, ...(refresh ? [refresh] : []));
    if (await store.tokens.saveTokens(access, refresh, { authorizedAt: options.authorizedAt })) accepted += 1;
    else refused += 1;
  };
  const startWorkers = (): Promise<void>[] => Array.from({ length: options.workers }, () => save());
  let settled = false;
  const early = options.saveFirst ? startWorkers() : null;
  const revocation = revoke().finally(() => {
    settled = true;
  });
  const first = early ?? startWorkers();
  await Promise.all(
    first.map(async (started) => {
      await started;
      while (!settled) await save();
    }),
  );
  await revocation;
  return { tried, accepted, refused };
}

/** Every token in `tokens` reads as absent on every store in `stores` (RFC 7009 §2.2: revoked means gone). */
export async function expectAllGone(stores: readonly Store[], tokens: readonly TokenRecord[]): Promise<void> {
  for (const store of stores) {
    const found = await Promise.all(
      tokens.flatMap((t) => [store.tokens.findAccessToken(t.tokenHash), store.tokens.findRefreshToken(t.tokenHash)]),
    );
    expect(found.filter((r) => r !== null)).toEqual([]);
  }
}

/**
 * Resolves once `store` answers again after an outage (its connection comes back on a later call), so an
 * outage rule can go on once the backend is back; rejects with the last failure after 10 s.
 */
export async function untilServing(store: Store): Promise<void> {
  for (let deadline = Date.now() + 10_000; ; ) {
    try {
      await store.clients.findClient('readiness-probe');
      return;
    } catch (err) {
      if (Date.now() > deadline) throw err;
      // Polling, not a correctness sleep: the backend's reconnect has no event to wait on from here.
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  }
}
