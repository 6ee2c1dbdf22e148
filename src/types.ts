// Types shared by the router and its host app.
import type { ErrorRequestHandler, RequestHandler, Router } from 'express';
import type { ResolvedOptions } from './options.js';
import type { OAuthEvents } from './events/oauth-events.js';
import type { OAuthAdmin } from './admin/create-oauth-admin.js';
import type { OAuthHealth } from './health/create-health.js';

/** What `requireBearer` puts on `req.auth`: who the access token is for (RFC 6750 §2.1). */
export interface BearerAuth {
  /** The integration the token was issued to. */
  readonly clientId: string;
  /** The user who granted it, or `null` for client_credentials tokens. */
  readonly userId: string | null;
  /**
   * The scopes the token is limited to; empty for a token without a scope (see `allAccess`). Only those the server
   * knows: a scope dropped from a non-empty `scopes` option since the token was issued is left out (RFC 6749 §3.3).
   */
  readonly scope: readonly string[];
  /**
   * True for a token without a scope (an integration registered without scopes, as SPEC's are) while the
   * `allAccessWithoutScopes` option is on: it may do everything, whatever `scope` says. A host route doing its
   * own scope checks tests `auth.allAccess || auth.scope.includes(x)`, as `requireBearer({ scope })` does.
   */
  readonly allAccess: boolean;
  /** Tokens of one authorization share a grant id (revocation unit). */
  readonly grantId: string;
  /** The base address that issued the token ({auth_url} or {legacy_auth_url}). */
  readonly issuer: string;
  readonly expiresAt: Date;
}

/** Options of `requireBearer`. */
export interface RequireBearerOptions {
  /**
   * Scopes the token must all carry; otherwise 403 `insufficient_scope` (RFC 6750 §3.1). An all-access token
   * (`req.auth.allAccess`) satisfies any scope. A scope outside a non-empty `scopes` option, which no token could
   * carry, or one that is not a scope-token (RFC 6749 §3.3), is an `OptionsError` when `requireBearer` is called
   * (at start-up, as the host mounts its routes).
   */
  readonly scope?: string | readonly string[];
}

/** Options of `rotateSigningKey`. */
export interface RotateSigningKeyOptions {
  /**
   * The keys may have leaked (a copy of the store's data, of a host's memory): sign with the new key at once and
   * delete every older key, cutting their tokens short, rather than publish it first and retire them gently.
   */
  readonly leaked?: boolean;
}

/** What `rotateSigningKey` did. */
export interface RotatedSigningKey {
  /**
   * The new key's `kid`. With `leaked`, it may already be deleted (it is then in `deleted`): a replacement at the same
   * moment made a newer key, which signs instead; `signingKid` names the key that signs.
   */
  readonly kid: string;
  /**
   * `leaked` only: the key that signs once this call is done, `kid` unless a replacement at the same moment made a newer
   * key (as the store stood when this call chose what to delete; see README "JWT access tokens"). `null` for a
   * planned rotation, whose new key signs three minutes after it was made and the older one until then.
   */
  readonly signingKid: string | null;
  /** The kids whose records this call deleted (`leaked` only; empty for a planned rotation). */
  readonly deleted: readonly string[];
}

/** What `createOAuthRouter` returns. */
export interface OAuthRouter {
  /** Serves /oauth2/authorize, /oauth2/token (and the login and consent forms) at both base addresses. */
  readonly router: Router;
  /**
   * RFC 6750 bearer-token middleware factory for the host's API routes. An admitted request's answer is
   * `Cache-Control: no-store` unless the route sets its own (RFC 9111 §3.5: it is the token's).
   */
  requireBearer(options?: RequireBearerOptions): RequestHandler;
  /**
   * Withdraws a user's consent for an integration and revokes that integration's tokens for the user
   * (for the host's own account pages; the router also serves `{issuer}/oauth2/consents`). Reported on
   * `events` as `consent.withdrawn` and `token.revoked`, with `issuer` and `ip` null.
   */
  withdrawConsent(userId: string, clientId: string): Promise<void>;
  /**
   * With `accessTokenFormat: 'jwt'` and store-kept keys: generates a new ES256 key and stores it; every instance
   * publishes it within a minute and signs with it three minutes after it was made (so that every JWKS, cached
   * or not, has it first). Tokens signed with older keys keep verifying until they expire; the JWKS lists both
   * meanwhile. With `{ leaked: true }` (the store must have `keys.replaceSigningKeys` or `keys.deleteSigningKey`), the
   * new key signs at once and every older key's record is deleted, in one atomic step with `replaceSigningKeys` (a
   * failure changed everything or nothing): each instance stops verifying and publishing them when it next reads the
   * store's keys (within a minute), and their tokens are refused. Rejects when the host supplies `jwt.signingKeys`
   * or tokens are opaque.
   * @see RFC 9068 §4, RFC 7517 §5, RFC 9700 §4.10 (a leaked key's tokens must stop working).
   */
  rotateSigningKey(options?: RotateSigningKeyOptions): Promise<RotatedSigningKey>;
  /** The validated options. */
  readonly options: ResolvedOptions;
  /** Audit events (`options.events`, or the router's own): `oauth.events.on('event', e => log.info(e))`. */
  readonly events: OAuthEvents;
  /**
   * The integration lifecycle (`createOAuthAdmin` over the router's store, publishing to `events`), for the
   * host's own admin pages. Its methods need the store's `administration` tier. @see RFC 6749 §2, RFC 7009 §2.1.
   */
  readonly admin: OAuthAdmin;
  /**
   * Readiness (store reachable; with JWT access tokens, signing keys loaded) and liveness handlers, for the
   * host to mount where it chooses: `app.get('/health/ready', oauth.health.readiness)`.
   */
  readonly health: OAuthHealth;
  /**
   * An error handler to mount after your body parsers and the router, before your own: what your parsers refused
   * on the router's addresses (malformed JSON, a body over your limit, a charset) is answered as the router answers
   * it, RFC 6749 §5.2 JSON at the token, revocation and introspection endpoints and an error page on the login and
   * consent forms, rather than by your handler's format. Errors on your other routes pass on untouched.
   * `app.use(express.json()); app.use(oauth.router); app.use(oauth.errorHandler); app.use(yourErrorHandler)`.
   */
  readonly errorHandler: ErrorRequestHandler;
}

// Express's global `Express.Request`, which @types/express 4 and 5 both have their Request extend: an augmentation of
// `express-serve-static-core` (which @types/express depends on, not this package nor the host) is lost where that
// module does not resolve from the package, as under pnpm without hoisting or Yarn PnP.
declare global {
  namespace Express {
    interface Request {
      /**
       * Set by `requireBearer` on success. Behind an accessor on Express's request prototype: assign `undefined`
       * to clear it (`delete` finds no own property to remove).
       */
      auth?: BearerAuth | undefined;
    }
  }
}
