// The shape of an express-session store, so the published options need no @types/express-session.

/**
 * An express-session store: `MemoryStore`, connect-redis, connect-pg-simple or any other instance of a
 * class extending express-session's `Store` (express-session calls the inherited `createSession`,
 * `regenerate` and `load`, and listens for `connect`/`disconnect`). Declared here, loosely typed, so that a
 * host type-checks without `@types/express-session`; every real store fits.
 * @see RFC 6819 §4.4.1.4 (the login session is server-side state, kept wherever the host chooses).
 */
export interface SessionStoreLike {
  get(sid: string, callback: (err: any, session?: any) => void): void;
  set(sid: string, session: any, callback?: (err?: any) => void): void;
  destroy(sid: string, callback?: (err?: any) => void): void;
  createSession(req: any, session: any): unknown;
  regenerate(req: any, callback: (err?: any) => any): void;
  load(sid: string, callback: (err: any, session?: any) => any): void;
  on(event: string, listener: (...args: any[]) => void): unknown;
}
