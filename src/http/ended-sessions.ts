// Keeps a session that a sign-out or a sign-in ended from being written back by a request that loaded it before.
import { RELAYED_EVENTS, relayStoreEvent, unrelayStoreEvent, type RelayedListeners } from './session-store-events.js';

/** Most ended session ids remembered; past it the oldest go first (each sign-in and sign-out adds one). */
const MAX_ENDED = 10_000;

/** What the guard needs of an express-session store: the methods that write a session or end one. */
interface WritingStore {
  set(sid: string, session: unknown, callback?: (err?: unknown) => void): void;
  destroy(sid: string, callback?: (err?: unknown) => void): void;
}

/**
 * The router's own session store, as express-session is given it, refusing to write again a session id that this
 * process destroyed: at a sign-out, a "use another account", or a sign-in (the id it replaces, recorded as its destroy
 * starts: a write before then is wiped by that destroy). A request of the same session that loaded it before (a consent Allow issuing its code, an authorization request in another tab,
 * the requests of whoever holds a stolen cookie) would otherwise save or touch it when it ends, and bring the sign-in
 * back: express-session's last write wins, and with `rolling` its answer re-sends the cookie too. An outside run on the
 * example app's Redis session store saw 55 of 60 sign-outs undone by an Allow answered meanwhile, and 20 of 40 by an
 * authorization request. Such a write is dropped (reported done: the request's answer stands); the id is remembered for
 * `rememberSeconds` (the idle lifetime, after which a sign-in that was written back would have expired anyway), at most
 * MAX_ENDED ids. Within one process, as the consent form's double-submit guard: instances without sticky sessions can
 * still write back a session another instance ended. Every other call reaches the store as it is, on the store itself.
 * @see RFC 6819 §5.1.5.3 (session lifetime), OWASP Session Management Cheat Sheet (a sign-out ends the session on the server).
 */
export function guardEndedSessions<S extends WritingStore>(store: S, rememberSeconds: number): S {
  const ended = new Map<string, number>();
  const rememberMs = rememberSeconds * 1000;
  const isEnded = (sid: string): boolean => {
    const at = ended.get(sid);
    return at !== undefined && Date.now() - at < rememberMs;
  };
  const end = (sid: unknown): void => {
    if (typeof sid !== 'string') return;
    const now = Date.now();
    ended.delete(sid);
    ended.set(sid, now);
    // Insertion order is the order of ending: the oldest, and the expired, are first.
    for (const [id, at] of ended) {
      if (ended.size <= MAX_ENDED && now - at < rememberMs) break;
      ended.delete(id);
    }
  };
  const skipWrite = (callback: unknown): void => {
    // Answered as the store would, after this call returns (a microtask: nothing waits on time).
    if (typeof callback === 'function') queueMicrotask(callback as () => void);
  };
  const bound = new WeakMap<object, unknown>();
  // express-session's 'connect' and 'disconnect' listeners for this router: kept here, and handed on from one listener
  // the store has for every router on it (session-store-events.ts), not added to the store one pair per router.
  const relayed: RelayedListeners = new Map();
  return new Proxy(store, {
    get(target, key, receiver) {
      const value: unknown = Reflect.get(target, key, target);
      if (typeof value !== 'function') return value;
      const method = value as (...args: unknown[]) => unknown;
      if (key === 'on' || key === 'addListener') {
        return (event: string | symbol, listener: unknown) => {
          if (!RELAYED_EVENTS.has(event) || typeof event !== 'string' || typeof listener !== 'function') return method.call(target, event, listener);
          relayStoreEvent(target as unknown as Parameters<typeof relayStoreEvent>[0], relayed, event, listener as (...args: unknown[]) => void);
          return receiver;
        };
      }
      if (key === 'off' || key === 'removeListener') {
        return (event: string | symbol, listener: unknown) => {
          if (!RELAYED_EVENTS.has(event) || typeof event !== 'string') return method.call(target, event, listener);
          unrelayStoreEvent(relayed, event, listener as (...args: unknown[]) => void);
          return receiver;
        };
      }
      // Recorded before the store is asked: a write that starts while the destroy is under way is dropped too.
      if (key === 'destroy') return (sid: unknown, ...rest: unknown[]) => { end(sid); return method.call(target, sid, ...rest); };
      if (key === 'regenerate') return (req: { sessionID?: unknown }, ...rest: unknown[]) => { end(req.sessionID); return method.call(target, req, ...rest); };
      if (key === 'set' || key === 'touch') {
        return (sid: string, session: unknown, callback?: unknown) => (isEnded(sid) ? skipWrite(callback) : method.call(target, sid, session, callback));
      }
      // Called on the store itself, never the proxy: a store class with #private fields works as without the guard.
      if (!bound.has(method)) bound.set(method, method.bind(target));
      return bound.get(method);
    },
  });
}
