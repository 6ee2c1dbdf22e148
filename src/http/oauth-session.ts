// The router's own corner of the express-session: signed-in user, CSRF token, pending authorization requests.
import type { Request } from 'express';
import type { AuthenticatedUser } from '../user-auth.js';

/** An authorization request validated at GET /oauth2/authorize, waiting for consent. */
export interface PendingAuthorization {
  readonly clientId: string;
  readonly redirectUri: string;
  readonly scope: readonly string[];
  readonly state: string | undefined;
  readonly codeChallenge: string | null;
  readonly issuer: string;
  /**
   * The request rebuilt from its validated parameters only (never the raw query string, whose size the
   * client chooses): where to resume it after a sign-in.
   */
  readonly query: string;
  /**
   * When the GET /oauth2/authorize that made it began, before the integration was read: the `issuedAt` of
   * the code it leads to, so a revocation after that moment voids the code.
   */
  readonly createdAt: number;
}

/**
 * The router's session data, under one key so it never collides with the host's own. It exists only once
 * somebody signed in: a signed-out browser gets no server-side session (anonymous floods must not fill a store).
 */
export interface OAuthSessionData {
  /** Signed in through the router's own login form. */
  user?: AuthenticatedUser;
  /** When that sign-in happened and when it was last used (ms): the absolute and idle lifetimes. */
  signedInAt?: number;
  lastSeenAt?: number;
  /**
   * The user the CSRF token and the pending requests were made for. A different user (the host's login
   * signed somebody in, or in again) finds them gone: nothing made before a sign-in survives it.
   */
  userId?: string;
  csrf?: string;
  pending?: Record<string, PendingAuthorization>;
  /**
   * The authorization request (its validated query) the last sign-in through the login form was made for: it counts
   * as the re-authentication that request's `prompt=login` or `max_age` asked for, once (reauthentication.ts).
   */
  signedInFor?: { query: string; at: number };
  /** The last requests this session answered on the consent page: id → the decision and when (ms). */
  answered?: Record<string, { decision: 'allow' | 'deny'; at: number }>;
  /** Said once on the next page shown (post/redirect/get): what the form the user sent did. */
  notice?: string;
}

const KEY = 'expressOAuthRouter';

function sessionOf(req: Request): Record<string, unknown> {
  const session = (req as unknown as { session?: Record<string, unknown> }).session;
  if (!session) throw new Error('express-session did not run before the OAuth router');
  return session;
}

/** The router's session data, created empty on first use: call it only to write. */
export function oauthSession(req: Request): OAuthSessionData {
  const session = sessionOf(req);
  session[KEY] ??= {};
  return session[KEY] as OAuthSessionData;
}

/**
 * The router's session data if there is any. Reading never creates it, so that express-session (with
 * `saveUninitialized: false`) stores nothing for a browser nobody signed in with.
 */
export function readOAuthSession(req: Request): OAuthSessionData | undefined {
  return sessionOf(req)[KEY] as OAuthSessionData | undefined;
}

/** Forgets the router's data (sign-out, expiry, another user); the host's keys of a shared session stay. */
export function clearOAuthSession(req: Request): void {
  const session = sessionOf(req);
  if (KEY in session) delete session[KEY];
}

/** Whether a session key is the router's own (a new session at sign-in keeps the host's keys only). */
export function isOAuthSessionKey(key: string): boolean {
  return key === KEY;
}
