// One 'connect' and one 'disconnect' listener on a session store however many routers share it, each router's held weakly.

type Listener = (...args: unknown[]) => void;

/** A router's listeners for the relayed events (express-session's `onconnect` and `ondisconnect`). */
export type RelayedListeners = Map<string, Set<Listener>>;

/** The session store events express-session listens to, for every router it runs for: `store.on(…)` in `session()`. */
export const RELAYED_EVENTS: ReadonlySet<string | symbol> = new Set(['connect', 'disconnect']);

interface EventSource {
  on(event: string, listener: Listener): unknown;
}

interface Relay {
  readonly routers: Set<WeakRef<RelayedListeners>>;
  /** The routers in `routers`, to be looked up without walking it. */
  readonly registered: WeakSet<RelayedListeners>;
  readonly events: Set<string>;
}

const relays = new WeakMap<object, Relay>();

/**
 * Adds `listener` for `event` to a router's `own` listeners, and makes sure the store has one listener of its own for
 * `event` that hands it on to every router still alive. express-session adds a `'connect'` and a `'disconnect'` listener
 * to its store at each `session()` call and never takes them off: one router per tenant on a shared store passed Node's
 * limit of 10 (`MaxListenersExceededWarning`) at the 11th, and a process that makes a router per test or per reload on
 * one store kept every router it dropped reachable from that store. Routers are held by `WeakRef`: one that is gone
 * (its session middleware, which holds `own`, collected) is dropped from the store at the next event or registration.
 */
export function relayStoreEvent(store: EventSource, own: RelayedListeners, event: string, listener: Listener): void {
  let relay = relays.get(store);
  if (relay === undefined) {
    relay = { routers: new Set(), registered: new WeakSet(), events: new Set() };
    relays.set(store, relay);
  }
  let listeners = own.get(event);
  if (listeners === undefined) {
    listeners = new Set();
    own.set(event, listeners);
  }
  listeners.add(listener);
  const { routers, registered, events } = relay;
  prune(routers);
  if (!registered.has(own)) {
    registered.add(own);
    routers.add(new WeakRef(own));
  }
  if (events.has(event)) return;
  events.add(event);
  store.on(event, (...args: unknown[]) => {
    prune(routers);
    for (const ref of [...routers]) for (const each of [...(ref.deref()?.get(event) ?? [])]) each(...args);
  });
}

/** Takes `listener` for `event` off a router's own listeners (the store's relay stays, for the other routers). */
export function unrelayStoreEvent(own: RelayedListeners, event: string, listener: Listener): void {
  own.get(event)?.delete(listener);
}

function prune(routers: Set<WeakRef<RelayedListeners>>): void {
  for (const ref of routers) if (ref.deref() === undefined) routers.delete(ref);
}
