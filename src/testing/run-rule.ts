// Runs one conformance rule on a fresh store, or says why it is skipped: shared by both runners.
import type { Store, StoreTier } from '../stores/contract.js';
import { missingStoreMethods, STORE_TIERS } from '../stores/check-store.js';
import type { ConformanceRule, RuleContext, StoreConformanceOptions } from './conformance-types.js';
import { OUTAGE_SKIPPED_REASON } from './conformance-outage.js';
import { DEFAULT_RACE_ROUNDS } from './interleave.js';
import { callTimeoutOf, guardCalls, unguarded } from './call-deadline.js';

/** Default of `StoreConformanceOptions.timeoutMs`. @see RFC 6749 §4.1.2.1 (a store that never answers is an outage) */
export const DEFAULT_RULE_TIMEOUT_MS = 60_000;

/**
 * What a store has: the methods of each tier it lacks, as `missingStoreMethods` names them, and under
 * `optional` the optional methods outside every tier it lacks (`store.clients.deleteClient`, `store.clients.disableClient`, `store.clients.enableClient`, `store.clientCopies.find`,
 * `store.keys.deleteSigningKey`, `store.keys.replaceSigningKeys`, `store.backendTime`). @see DESIGN §2
 */
export type StoreShape = Readonly<Record<StoreTier | 'optional', readonly string[]>>;

/** Methods no tier requires, so that stores of contract v1 keep passing; rules naming them in `needs` skip. */
const OPTIONAL_METHODS = [['clients', 'deleteClient'], ['clients', 'disableClient'], ['clients', 'enableClient'], ['clientCopies', 'find'], ['keys', 'deleteSigningKey'], ['keys', 'replaceSigningKeys']] as const;
/** The same, on the Store itself. */
const OPTIONAL_STORE_METHODS = ['backendTime'] as const;

/** The shape of `store`: for each tier, the `store.part.method` names it lacks. @see DESIGN §2 */
export function shapeOf(store: Store): StoreShape {
  const shape = {} as Record<StoreTier | 'optional', readonly string[]>;
  for (const tier of Object.keys(STORE_TIERS) as StoreTier[]) shape[tier] = missingStoreMethods(store, tier);
  const parts = store as unknown as Record<string, Record<string, unknown> | undefined>;
  shape.optional = OPTIONAL_METHODS.filter(([part, method]) => typeof parts[part]?.[method] !== 'function').map(
    ([part, method]) => `store.${part}.${method}`,
  ).concat(OPTIONAL_STORE_METHODS.filter((method) => typeof (store as unknown as Record<string, unknown>)[method] !== 'function').map((method) => `store.${method}`));
  return shape;
}

/**
 * Why `rule` does not apply to a store of `shape`, or `null` when it does (or the shape is unknown).
 * Rules of the required tier always apply: a store without a required method fails them.
 * @see RFC 6749 §10.3–10.5.
 */
export function skipReason(rule: ConformanceRule, options: StoreConformanceOptions, shape: StoreShape | null): string | null {
  if (rule.needsOutageHook && !options.simulateOutage) return OUTAGE_SKIPPED_REASON;
  if (rule.needsPeer && !options.openPeer) return PEER_SKIPPED_REASON;
  if (shape === null) return null;
  const lacking = new Set(Object.values(shape).flat());
  if (rule.needs) {
    const missing = rule.needs.filter((method) => lacking.has(method));
    return missing.length > 0 ? `the store lacks ${missing.join(', ')}` : null;
  }
  if (rule.tier === 'required' || shape[rule.tier].length === 0) return null;
  return `the store lacks tier "${rule.tier}" (${shape[rule.tier].join(', ')})`;
}

/** Why a rule that needs `openPeer` is skipped without it. @see RFC 7009 §2.1 (revoked means refused, everywhere) */
export const PEER_SKIPPED_REASON =
  'no openPeer hook: nothing checks this store against another instance on its backend (its revocation feed, and ' +
  'its atomic operations raced across instances)';

/** Opens a peer of `store` with `options.openPeer`, runs `use` on it and closes it, whatever `use` does. */
async function withPeerOf<T>(options: StoreConformanceOptions, store: Store, use: (peer: Store) => Promise<T>): Promise<T> {
  const peer = await options.openPeer!(store);
  if (peer === null || typeof peer !== 'object') throw new TypeError(`openPeer() resolved ${String(peer)}, not a store`);
  try {
    return await use(peer);
  } finally {
    await peer.close?.();
  }
}

async function destroy(options: StoreConformanceOptions, store: Store): Promise<void> {
  if (options.destroyStore) await options.destroyStore(store);
  else await store.close?.();
}

/** Creates a store, runs `use` on it and destroys it, whatever `use` does. */
async function withStore<T>(options: StoreConformanceOptions, use: (store: Store) => Promise<T>): Promise<T> {
  const store = await options.createStore();
  if (store === null || typeof store !== 'object') throw new TypeError(`createStore() resolved ${String(store)}, not a store`);
  try {
    return await use(store);
  } finally {
    await destroy(options, store);
  }
}

/**
 * Looks at one store from `createStore` to learn which tiers it has, then destroys it.
 * @see checkStore (what the router checks at start-up).
 */
export async function probeStore(options: StoreConformanceOptions): Promise<StoreShape> {
  let shape: StoreShape | null = null;
  try {
    await withStore(options, async (store) => {
      shape = shapeOf(store);
    });
  } catch (error) {
    // The probe runs while the suite is collected, before any beforeAll: a destroyStore that needs what a
    // hook sets up fails here, yet the shape was read, and without it no rule of a missing method would skip.
    if (shape === null) throw error;
  }
  return shape!;
}

/**
 * Runs one rule on a fresh store from `createStore`, destroying every store it made. Rejects with the
 * rule's assertion error, or with a timeout error when the rule (creation and destruction included) has
 * not settled within `options.timeoutMs`. The rule sees each store through `guardCalls`: a call that has not
 * settled within `options.callTimeoutMs` rejects naming its method; the hooks are handed the stores themselves.
 * @see RFC 6749 §10.3–10.5.
 */
export async function runRule(rule: ConformanceRule, options: StoreConformanceOptions): Promise<void> {
  const timeoutMs = options.timeoutMs ?? DEFAULT_RULE_TIMEOUT_MS;
  const guard = (store: Store): Store => guardCalls(store, callTimeoutOf(options, timeoutMs));
  let timer: NodeJS.Timeout | undefined;
  const hung = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`the rule did not settle within ${timeoutMs} ms (a store call that never answers?)`)), timeoutMs);
  });
  const { simulateOutage } = options;
  const running = withStore(options, (store) => {
    const context: RuleContext = {
      store: guard(store),
      rounds: options.rounds ?? DEFAULT_RACE_ROUNDS,
      withFreshStore: (use) => withStore(options, (fresh) => use(guard(fresh))),
      simulateOutage: simulateOutage ? (of) => simulateOutage(unguarded(of)) : null,
      withPeer: options.openPeer ? (use, of = store) => withPeerOf(options, unguarded(of), (peer) => use(guard(peer))) : null,
      outageSparesPeer: options.outageSparesPeer === true,
    };
    return rule.run(context);
  });
  try {
    await Promise.race([running, hung]);
  } finally {
    clearTimeout(timer);
  }
}
