// The shapes of the Store conformance suite: its rules, what a rule runs with, its options and its report.
import type { Store, StoreTier } from '../stores/contract.js';

/**
 * Starts an outage of the backend of `store` (stop the server, cut the proxy in front of it, pause the
 * container...) and resolves once the outage is in effect. Resolves a function that ends the outage and
 * resolves once the backend answers again. Only the backend is touched: the suite goes on using the same
 * store object afterwards, so it must reconnect by itself.
 * @see RFC 6749 §4.1.2.1, §5.2 (`temporarily_unavailable`), RFC 9110 §15.6.4 (503).
 */
export type SimulateOutage<S extends Store = Store> = (store: S) => Promise<() => Promise<void>>;

/**
 * Options of `runStoreConformance` and `checkStoreConformance`, typed by the store `createStore` makes, which is
 * the store `destroyStore`, `simulateOutage` and `openPeer` are handed.
 * @see RFC 6749 §4.1.2, §10.3–10.5, RFC 7009 §2.1 (what the suite holds a store to).
 */
export interface StoreConformanceOptions<S extends Store = Store> {
  /** Names the suite in the test report, e.g. `'mariadb'`. */
  readonly name: string;
  /**
   * Returns a fresh, empty store. Called once per rule (and once more per round by the rules that race on
   * an empty store), so no rule depends on another's data or on the order in which they run. Each store it
   * returns must be independent of the others: its own database, schema, table prefix or key prefix.
   */
  createStore(): Promise<S> | S;
  /**
   * Called with every store `createStore` returned once the rule is done with it, e.g. to close it and
   * drop its schema. Default: `store.close?.()`. When given, it replaces the default: close the store here.
   */
  destroyStore?(store: S): Promise<void> | void;
  /**
   * Enables the outage rule (see `SimulateOutage`). Without it the rule is reported as skipped, loudly:
   * a store that throws raw driver errors makes the router answer 500 instead of 503.
   */
  simulateOutage?: SimulateOutage<S>;
  /**
   * Opens a second store on the backend of `store` (one `createStore` made), as another instance of your app,
   * or the CLI, would open it: the same database, schema and prefix. Enables the rules that revoke through it
   * and check that `store`'s revocation feed moves (a feed that counts only its own process's revocations
   * keeps a token revoked elsewhere alive in every other instance's cache), and the races run with their racers
   * split between the two stores (a store atomic only within its own process passes every other rule). The
   * suite closes it with `close()` before `store` is destroyed. Without it those rules are skipped, saying so.
   */
  openPeer?(store: S): Promise<Store> | Store;
  /**
   * Set when `simulateOutage` cuts only the store it is given (a proxy in front of it, say) and a store from
   * `openPeer` still reaches the backend meanwhile. The outage rule then also revokes a grant through the peer during
   * the outage, and checks that `store`'s revocation feed, which heard nothing of it, does not answer after the
   * outage a mark it gave before (a token cached before the gap would be served although revoked). Leave it unset
   * when the hook stops the whole backend, or when a peer cannot stay open across it.
   */
  readonly outageSparesPeer?: boolean;
  /**
   * Rounds of each race rule on one store. Default `DEFAULT_RACE_ROUNDS` (118): every interleaving of the
   * sweep (`RACE_SCHEDULES`) once. That is what makes the suite fail an in-process store with an `await`
   * between a check and its write on every run: the event loop is deterministic, so the round whose offset
   * opens the window opens it every time (the package's own meta-tests check this, five runs per fault).
   * A networked store's round trips vary from run to run: raise `rounds` to give them more chances (the sweep
   * starts over); fewer rounds run only the head of the sweep (same-tick starts and the shortest offsets).
   * The races that need an empty store per round (`onlyIfNone`, through one store and across instances) run
   * `ceil(rounds / 20)` rounds (6 by default), each on a new store from `createStore`, striding through the sweep.
   */
  readonly rounds?: number;
  /**
   * Runs only some rules; the others are left out of the run and of the report. A list of strings picks the rules
   * whose name contains one of them (`['consumeCode']`); a function picks those whose name it accepts.
   */
  readonly only?: readonly string[] | ((ruleName: string) => boolean);
  /**
   * How long one rule may take, store creation and destruction included, before it fails as hung
   * (default 60 000 ms). A guard against a store that never settles (e.g. during an outage), not a
   * performance requirement: no rule asserts a duration.
   */
  readonly timeoutMs?: number;
  /**
   * How long one store call a rule makes may take before it fails naming the method (`store.tokens.saveTokens did
   * not settle within 30000 ms`), instead of the whole rule failing as hung. Default 30 000 ms, or half of
   * `timeoutMs` when that is shorter: well past a driver's own timeout (the built-in stores' are 5 s), which a
   * call during the outage rule waits out, on a slow CI machine too. Must be below `timeoutMs`. Not a performance
   * requirement either: no rule asserts a duration.
   */
  readonly callTimeoutMs?: number;
}

/** What a rule runs with. @see RFC 6749 §10.3–10.5. */
export interface RuleContext {
  /** A fresh store from `createStore`, destroyed after the rule. */
  readonly store: Store;
  /** Rounds of each race (`StoreConformanceOptions.rounds` or its default). */
  readonly rounds: number;
  /** Runs `use` on another fresh store, destroyed as soon as `use` settles. */
  withFreshStore<T>(use: (store: Store) => Promise<T>): Promise<T>;
  /** The outage hook, for the one rule that needs it (`needsOutageHook`); `null` when not supplied. */
  readonly simulateOutage: SimulateOutage | null;
  /**
   * Runs `use` on a second store on `store`'s backend (`openPeer`), or on the backend of `of` (a store from
   * `withFreshStore`), closed as soon as `use` settles; `null` when `openPeer` is not supplied (the rules that
   * need it, `needsPeer`, are then skipped).
   */
  readonly withPeer: (<T>(use: (peer: Store) => Promise<T>, of?: Store) => Promise<T>) | null;
  /** `StoreConformanceOptions.outageSparesPeer`: a peer still reaches the backend while `simulateOutage` cuts `store`. */
  readonly outageSparesPeer: boolean;
}

/**
 * One rule of the contract, as data: any runner can run it. It throws (node:assert) when the store breaks it.
 * @see RFC 6749 §10.3–10.5 (what stores keep).
 */
export interface ConformanceRule {
  /** The tier whose methods the rule checks; the rule is skipped for a store without it. */
  readonly tier: StoreTier;
  /** The rule, stated as a sentence: a failure reads as the broken rule. Unique within the suite. */
  readonly name: string;
  /**
   * When set, the methods (`store.part.method`) the rule needs besides the required tier, replacing the
   * tier's list: e.g. `revokeClientTokens`, which both the `administration` and `consents` tiers include.
   */
  readonly needs?: readonly string[];
  /** The rule needs `simulateOutage` and is skipped, loudly, without it. */
  readonly needsOutageHook?: boolean;
  /** The rule needs `openPeer` and is skipped without it. */
  readonly needsPeer?: boolean;
  run(context: RuleContext): Promise<void>;
}

/**
 * What `checkStoreConformance` found: every selected rule lands in exactly one list, in suite order.
 * @see RFC 6749 §10.3–10.5 (what the rules hold a store to).
 */
export interface ConformanceReport {
  readonly passed: string[];
  readonly failed: { readonly rule: string; readonly error: Error }[];
  readonly skipped: { readonly rule: string; readonly reason: string }[];
}
