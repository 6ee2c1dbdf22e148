// express-session store calls as promises, for tests that drive the example app's session stores directly.
import type { SessionData } from 'express-session';
import type { AppSessionStore } from '../../example-app/session-store.js';

/** One live session, for tests that only need something to store. */
export const SESSION = { cookie: { originalMaxAge: 60_000, expires: new Date(Date.now() + 60_000) } } as unknown as SessionData;

/** The store's `get` of `sid`. */
export function getSession(sessions: AppSessionStore, sid: string): Promise<SessionData | null | undefined> {
  return new Promise((resolve, reject) => sessions.store!.get(sid, (err, data) => (err ? reject(err) : resolve(data))));
}

/** The store's `set` of `sid`. */
export function setSession(sessions: AppSessionStore, sid: string, data: SessionData): Promise<void> {
  return new Promise((resolve, reject) => sessions.store!.set(sid, data, (err) => (err ? reject(err) : resolve())));
}
