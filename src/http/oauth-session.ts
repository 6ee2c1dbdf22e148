// The router's own corner of the express-session: signed-in user, CSRF token, pending authorization requests.
import type { Request } from 'express';
import type { AuthenticatedUser } from '../user-auth.js';
import { DEFAULT_SESSION_COOKIE_NAME } from './page-cookies.js';

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
  /**
   * Said once on the next page shown (post/redirect/get): the integration whose access the user withdrew, by name
   * (`null`: one deleted meanwhile). The name, not a sentence: the page sets it in `<bdi>` as it sets every name.
   */
  withdrawn?: { name: string | null };
  /**
   * The main issuer of the router that wrote this data, in a session shared with the host app: another router that finds
   * it under its own key (two routers with one `cookieName`) takes it as no data, never as its own sign-in.
   */
  router?: string;
}

const KEY = 'expressOAuthRouter';

/** This request's router in a session shared with the host app: its key there, its main issuer, what it says on a clash. */
interface SharedSession {
  readonly key: string;
  readonly owner: string;
  readonly onForeign: (owner: string) => void;
}
const sharedSessions = new WeakMap<Request, SharedSession>();

/**
 * Whether this process has made routers of more than one main issuer, any of which may keep data in a host's session.
 * Data without a mark was kept before routers marked theirs, when every router used one key: with more than one router
 * here, it may be another's. Only that answer is read, so only the first issuer is kept, not one per router: a host
 * making routers on demand (a tenant each, one per test or reload) keeps one string, not every issuer it ever served.
 * No router is ever forgotten (a router has no end the process can see): one gone leaves the answer at "several",
 * which errs towards asking an unmarked sign-in to sign in again.
 */
const sharingOwners: { first: string | undefined; several: boolean } = { first: undefined, several: false };

/** Counts a router (by its main issuer) among those of this process that may share a host's session. */
export function registerSharedSessionOwner(owner: string): void {
  if (sharingOwners.first === undefined) sharingOwners.first = owner;
  else if (owner !== sharingOwners.first) sharingOwners.several = true;
}

/**
 * The key a router's data has in the host's express-session: `expressOAuthRouter` for the default `session.cookieName`
 * (as before), `expressOAuthRouter:<cookieName>` for another. Two routers in one app need two cookie names (README); in a
 * session they share, one key would make a sign-in at one router, against its own user directory, a sign-in at the other,
 * where the same user id may be somebody else. The router's own session is its alone and keeps the plain key.
 */
export function hostSessionKey(cookieName: string | undefined): string {
  return cookieName === undefined || cookieName === DEFAULT_SESSION_COOKIE_NAME ? KEY : `${KEY}:${cookieName}`;
}

/**
 * Says that this request's session is the host's, where this router's data lives under `key` and is marked with `owner`
 * (its main issuer). Data another router marked (two routers left with one cookie name) reads as none, `onForeign` hears
 * of it, and this router's first write replaces it.
 */
export function useSharedSessionKey(req: Request, key: string, owner: string, onForeign: (owner: string) => void): void {
  sharedSessions.set(req, { key, owner, onForeign });
}

function keyOf(req: Request): string {
  return sharedSessions.get(req)?.key ?? KEY;
}

/**
 * The data under this router's key, unless another router of a shared session marked it as its own, or it is
 * unmarked (kept before the upgrade that added the mark, under the key all routers then shared) while this process
 * runs more than one router: that sign-in may have been made at the other, against its user directory.
 */
function ownData(req: Request, session: Record<string, unknown>): OAuthSessionData | undefined {
  const shared = sharedSessions.get(req);
  const data = session[shared?.key ?? KEY] as OAuthSessionData | undefined;
  if (data === undefined || shared === undefined || data.router === shared.owner) return data;
  if (data.router === undefined) return sharingOwners.several ? undefined : data;
  shared.onForeign(data.router);
  return undefined;
}

function sessionOf(req: Request): Record<string, unknown> {
  const session = (req as unknown as { session?: Record<string, unknown> }).session;
  if (!session) throw new Error('express-session did not run before the OAuth router');
  return session;
}

/** The router's session data, created empty on first use: call it only to write. */
export function oauthSession(req: Request): OAuthSessionData {
  const session = sessionOf(req);
  const existing = ownData(req, session);
  if (existing !== undefined) return existing;
  const owner = sharedSessions.get(req)?.owner;
  const fresh: OAuthSessionData = owner === undefined ? {} : { router: owner };
  session[keyOf(req)] = fresh;
  return fresh;
}

/**
 * The router's session data if there is any. Reading never creates it, so that express-session (with
 * `saveUninitialized: false`) stores nothing for a browser nobody signed in with.
 */
export function readOAuthSession(req: Request): OAuthSessionData | undefined {
  return ownData(req, sessionOf(req));
}

/** Forgets the router's data (sign-out, expiry, another user); the host's keys of a shared session stay. */
export function clearOAuthSession(req: Request): void {
  const session = sessionOf(req);
  const key = keyOf(req);
  if (key in session) delete session[key];
}

/**
 * Whether a session key is this request's router's own (a new session at sign-in keeps every other key: the host's, and
 * another router's in a shared session, whose sign-in is its own).
 */
export function isOAuthSessionKey(req: Request, key: string): boolean {
  return key === keyOf(req);
}
