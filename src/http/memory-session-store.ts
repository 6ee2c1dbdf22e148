// The default home of login sessions: in memory, bounded in number, swept as sessions expire.
import type { EventEmitter } from 'node:events';
import session from 'express-session';
import type { SessionStoreLike } from './session-store-like.js';

/** Options of MemorySessionStore. */
export interface MemorySessionStoreOptions {
  /** Most sessions kept; the least recently used one makes room for a new one. Default 10,000. */
  readonly maxSessions?: number;
  /** Lifetime of a session whose cookie has no expiry, in seconds. Default 3600. */
  readonly ttl?: number;
}

interface Entry {
  readonly json: string;
  readonly expiresAt: number;
}

/**
 * A session as MemorySessionStore keeps it (what its `get` hands back and `set`/`touch` take): express-session's
 * session data, a JSON object whose `cookie.expires` ends it.
 * @see RFC 6819 §4.4.1.4 (the login session is server-side state).
 */
export interface StoredSession {
  readonly cookie?: { readonly expires?: Date | string | null | boolean };
  readonly [key: string]: unknown;
}

// express-session's Store base class (it supplies createSession, regenerate, load and the EventEmitter), typed
// by the shape the package publishes, so that the declaration files need no @types/express-session.
const StoreBase = session.Store as unknown as abstract new () => EventEmitter & Pick<SessionStoreLike, 'createSession' | 'regenerate' | 'load'>;

/**
 * An express-session store for one process that cannot grow without bound, unlike express-session's
 * MemoryStore, which keeps every session until it is read again after expiring. Sessions expire with their
 * cookie (or `ttl`); every write first sweeps the expired ones, oldest first, and at `maxSessions` the least
 * recently used one is dropped (its user signs in again). No timer: the sweeping rides on the writes, so an
 * idle process does no work and a flood pays for its own cleanup. The router only stores a session once
 * somebody signed in, so anonymous traffic does not reach it at all.
 * @see RFC 6819 §4.4.1.4 (session lifetime), RFC 6749 §10 (a server must not be exhausted by unauthenticated
 *   requests).
 */
export class MemorySessionStore extends StoreBase implements SessionStoreLike {
  // Insertion order is the order of last write (entries are re-inserted on every write and touch), which is
  // also the order of expiry when every session has the same lifetime.
  private readonly entries = new Map<string, Entry>();
  private readonly maxSessions: number;
  private readonly ttlMs: number;

  constructor(options: MemorySessionStoreOptions = {}) {
    super();
    const { maxSessions = 10_000, ttl = 3600 } = options;
    if (!Number.isInteger(maxSessions) || maxSessions <= 0) throw new TypeError('MemorySessionStore: maxSessions must be a positive integer');
    if (!Number.isInteger(ttl) || ttl <= 0) throw new TypeError('MemorySessionStore: ttl must be a positive integer number of seconds');
    this.maxSessions = maxSessions;
    this.ttlMs = ttl * 1000;
  }

  /** How many sessions are kept now (expired ones not yet swept included). */
  get size(): number {
    return this.entries.size;
  }

  get(sid: string, callback: (err: unknown, session?: StoredSession | null) => void): void {
    const entry = this.entries.get(sid);
    if (entry && entry.expiresAt <= Date.now()) this.entries.delete(sid);
    const found = entry && entry.expiresAt > Date.now() ? (JSON.parse(entry.json) as StoredSession) : null;
    queueMicrotask(() => callback(null, found));
  }

  set(sid: string, data: StoredSession, callback?: (err?: unknown) => void): void {
    this.write(sid, data);
    queueMicrotask(() => callback?.());
  }

  touch(sid: string, data: StoredSession, callback?: () => void): void {
    if (this.entries.has(sid)) this.write(sid, data);
    queueMicrotask(() => callback?.());
  }

  destroy(sid: string, callback?: (err?: unknown) => void): void {
    this.entries.delete(sid);
    queueMicrotask(() => callback?.());
  }

  length(callback: (err: unknown, length?: number) => void): void {
    this.sweep(Date.now());
    queueMicrotask(() => callback(null, this.entries.size));
  }

  clear(callback?: (err?: unknown) => void): void {
    this.entries.clear();
    queueMicrotask(() => callback?.());
  }

  private write(sid: string, data: StoredSession): void {
    const now = Date.now();
    this.sweep(now);
    this.entries.delete(sid);
    while (this.entries.size >= this.maxSessions) {
      const oldest = this.entries.keys().next().value as string;
      this.entries.delete(oldest);
    }
    const expires = data.cookie?.expires && typeof data.cookie.expires !== 'boolean' ? new Date(data.cookie.expires).getTime() : Number.NaN;
    this.entries.set(sid, { json: JSON.stringify(data), expiresAt: Number.isFinite(expires) ? expires : now + this.ttlMs });
  }

  /** Drops expired sessions from the oldest end, stopping at the first live one. */
  private sweep(now: number): void {
    for (const [sid, entry] of this.entries) {
      if (entry.expiresAt > now) break;
      this.entries.delete(sid);
    }
  }
}
