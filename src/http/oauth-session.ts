// The router's own corner of the express-session: signed-in user, CSRF token, pending authorization requests.
import type { Request } from 'express';
import type { AuthenticatedUser } from '../user-auth.js';

/** An authorization request validated at GET /oauth2/authorize, waiting for login and consent. */
export interface PendingAuthorization {
  readonly clientId: string;
  readonly redirectUri: string;
  readonly scope: readonly string[];
  readonly state: string | undefined;
  readonly codeChallenge: string | null;
  readonly issuer: string;
  /** The original query string, to resume the request after login. */
  readonly query: string;
  /**
   * When the GET /oauth2/authorize that made it began, before the integration was read: the `issuedAt` of
   * the code it leads to, so a revocation after that moment voids the code.
   */
  readonly createdAt: number;
}

/** The router's session data, under one key so it never collides with the host's own. */
export interface OAuthSessionData {
  user?: AuthenticatedUser;
  csrf?: string;
  pending?: Record<string, PendingAuthorization>;
  /** The authorization request (its query) whose browser was last sent to the host's login, and when. */
  hostLogin?: { readonly query: string; readonly at: number };
}

const KEY = 'expressOAuthRouter';

/** The router's session data (created empty on first use). Requires express-session to have run. */
export function oauthSession(req: Request): OAuthSessionData {
  const session = (req as unknown as { session?: Record<string, unknown> }).session;
  if (!session) throw new Error('express-session did not run before the OAuth router');
  session[KEY] ??= {};
  return session[KEY] as OAuthSessionData;
}
