// Refuses, under NODE_ENV=production, a login session set-up that leaks memory or does not survive a restart.
import session from 'express-session';
import type { ResolvedOptions } from '../options.js';
import type { UserAuth } from '../user-auth.js';
import { OptionsError } from '../options-error.js';

/** express-session's MemoryStore, from this copy of express-session or the host's own. */
export function isExpressSessionMemoryStore(store: unknown): boolean {
  return store instanceof session.MemoryStore || (store as { constructor?: { name?: string } } | null)?.constructor?.name === 'MemoryStore';
}

/**
 * When the router serves the login form itself (`verifyCredentials`) in production, its session must be
 * signed with a configured secret and kept in a store that expires sessions. A host that signs users in with
 * its own login (`currentUser` and `loginUrl`) keeps them in its own session and is not concerned, nor is one that
 * declares its own express-session (`session.hostSession`), whose secret and store are the host's. Outside
 * production (`npm start` of the example app, tests) both stay allowed, with the start-up warning.
 * @throws OptionsError naming `session.secret` or `session.store` and the fix.
 * @see RFC 6819 §4.4.1.4, RFC 6749 §10.12.
 */
export function checkProductionSession(options: ResolvedOptions, userAuth: UserAuth, nodeEnv = process.env.NODE_ENV): void {
  if (nodeEnv !== 'production' || typeof userAuth.verifyCredentials !== 'function' || options.session.hostSession === true) return;
  if (options.session.secret === undefined) {
    throw new OptionsError('session.secret', 'is required when NODE_ENV=production and the router serves its own login '
      + 'page (verifyCredentials): without it each process signs sessions with a random secret, so sign-ins do not '
      + 'survive a restart nor reach another instance. Set it to a long random string kept with your other secrets, '
      + 'or, if your app runs its own express-session in front of the router, set session.hostSession: true.');
  }
  if (isExpressSessionMemoryStore(options.session.store)) {
    throw new OptionsError('session.store', "is express-session's MemoryStore, which never sweeps expired sessions and "
      + 'grows without bound. Leave session.store unset (the router\'s bounded, expiring memory store, one process) or '
      + 'pass a shared store such as connect-redis or connect-pg-simple.');
  }
}
